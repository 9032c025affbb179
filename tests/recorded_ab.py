"""Sessions of `vnetbench ab` made from the recorded real A/A (tests/data/ab-aa-baseline:
the baseline path, 6 rounds of one pass): as it is, with arm B's TCP rate scaled (an
A/B with a regression), or with every pass in another state (nothing measured)."""

import shutil
from pathlib import Path

import pandas as pd

from vnetbench.analysis.results import load_results
from vnetbench.analysis.runrecord import read_record
from vnetbench.report.ab import verdict_table, write_verdicts

DATA = Path(__file__).parent / "data"
DEAD_STATUS = "path dead: 0 of 200 pings answered <img src=x onerror=alert(1)> | cell"


def recorded_session(directory: Path, b_tcp_factor: float = 1.0,
                     state: str | None = None) -> Path:
    """The recorded A/A's verdicts as `ab` writes them, after B's TCP rate was scaled
    (an A/B then: B's spec differs) or every pass was given another state."""
    frame = pd.read_parquet(directory / "results.parquet")
    record = read_record(directory)
    if b_tcp_factor != 1.0:
        frame.loc[(frame["variant"] == "B") & (frame["metric"] == "tcp_mbit"),
                  "value"] *= b_tcp_factor
        record.aa = False
        record.arms["B"]["spec"] = ["backbone.rate=80mbit"]
    if state is not None:
        frame["state"], frame["status"] = state, DEAD_STATUS
    frame.to_parquet(directory / "results.parquet", index=False)
    table = verdict_table(load_results(directory), 0.05, aa=bool(record.aa))
    write_verdicts(directory, table, record, aa=bool(record.aa))
    record.save(directory)
    return directory


def session_copy(root: Path, name: str) -> Path:
    """A fresh copy of the recorded A/A, root/name, for a test to change."""
    return Path(shutil.copytree(DATA / "ab-aa-baseline", root / name))
