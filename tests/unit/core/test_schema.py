"""The results schema is declared once, and reading results loads no runtime."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from vnetbench.analysis.results import ResultSet, load_results
from vnetbench.core.schema import (
    COLUMNS,
    MACHINES,
    ROUND,
    CellKey,
    Variant,
    parameter_column,
    setting_column,
)
from vnetbench.declared import catalogue
from vnetbench.model.topology import Settings
from vnetbench.scenarios import SCENARIOS

PROJECT = Path(__file__).resolve().parents[3]
RUNTIME = ("vnetbench.scenarios.", "vnetbench.runs", "vnetbench.deploy.lifecycle",
           "vnetbench.engines", "vnetbench.measure.probe")
READ_A_REPORT = """
import json, pkgutil, sys
from pathlib import Path
import vnetbench.report
for module in pkgutil.iter_modules(vnetbench.report.__path__):
    __import__(f"vnetbench.report.{module.name}")
from vnetbench.declared import catalogue
from vnetbench.report.document import read_report
from vnetbench.report.tables import summary_table
from vnetbench.analysis.results import load_results
catalogue()
summary_table(load_results(Path(sys.argv[1])))
read_report(Path(sys.argv[1]))
print(json.dumps(sorted(m for m in sys.modules if m.startswith("vnetbench"))))
"""


def test_reading_a_report_loads_no_runtime(data_dir: Path) -> None:
    """The report, its tables and the metric catalogue import nothing that measures
    (scenarios' code, runs, stacks, the engine), only the scenarios' declarations: in
    a fresh interpreter."""
    done = subprocess.run([sys.executable, "-c", READ_A_REPORT, str(data_dir / "results-quick")],
                          cwd=PROJECT, capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONPATH": str(PROJECT),
                               "DOCKER_HOST": "unix:///nonexistent"})
    loaded = json.loads(done.stdout.splitlines()[-1])
    assert "vnetbench.report.tables" in loaded
    assert "vnetbench.declared.room" in loaded
    assert [m for m in loaded if m.startswith(RUNTIME)] == []


def test_the_catalogue_holds_every_scenarios_metrics_and_no_other() -> None:
    declared = [m.name for m in catalogue()]
    emitted = [m.name for scenario in SCENARIOS.values() for m in scenario.metrics]
    assert declared[2:] == emitted  # after the rows every pass has (skipped, outside load)


def test_rows_keep_the_files_columns(tmp_path: Path) -> None:
    results, n20 = ResultSet(tmp_path), Variant("n20", parameters={MACHINES: 20})
    results.add(CellKey("r", "join", "wireguard", n20), 1, {"join_seconds": (1.5, "s")},
                {MACHINES: 20})
    results.add(CellKey("r", "transfer", "vnet", n20), 1,
                {"upload_interval_bytes": (9.0, "bytes")}, {}, interval_s=1.0)
    results.write()
    columns = list(load_results(tmp_path).columns)
    assert columns == [*COLUMNS, setting_column(MACHINES), parameter_column(MACHINES),
                       "interval_s"]
    assert (tmp_path / "results.csv").read_text().startswith(",".join(COLUMNS))


def test_named_setting_columns_are_settings() -> None:
    assert MACHINES in Settings.model_fields
    assert parameter_column(ROUND) == "var_round"  # what recorded A/B results hold
