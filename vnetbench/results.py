"""Results: one tidy row per measured value, written after every pass.

Columns: run_id, scenario, overlay, variant, pass, metric, value, unit, state,
status, remark, interval_s (a time series' point, e.g. a transfer's seconds;
empty for a pass's own values), method (the reference method a row belongs
to, empty outside one), plus one column per setting (`set_*`) and per parameter of the
variant (`var_*`, typed: a matrix cell's overrides, a sweep's value). state is
what code reads (outcome.State); status is the sentence people read ("ok", "path
dead: 0 of 200 pings answered ..."); remark says how the overlay adjusted the
settings ("TLS not in this build: measured plain").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from vnetbench.errors import UserError
from vnetbench.outcome import State, state_of_status
from vnetbench.rundir import write_atomic, write_text_atomic
from vnetbench.ui import note

RESULT_COLUMNS = ["run_id", "scenario", "overlay", "variant", "method", "pass", "metric", "value",
                  "unit", "state", "status", "remark"]
PARQUET = "results.parquet"
CSV = "results.csv"
RESULT_LINES = "results.txt"


@dataclass
class ResultSet:
    run_id: str
    directory: Path
    rows: list[dict[str, Any]] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    variant: str = "default"  # the matrix cell's settings variant
    variant_parameters: dict[str, Any] = field(default_factory=dict)  # -> var_* columns
    method: str = ""  # the reference method the rows belong to (vnetbench.methods)

    @classmethod
    def resume(cls, directory: Path) -> ResultSet:
        """Continue a results directory: keep its rows and RESULT lines."""
        results = cls("resumed", directory)
        frame = load_results(directory) if (directory / PARQUET).exists() else None
        if frame is not None:
            records = frame.to_dict("records")
            results.rows = [{str(k): v for k, v in row.items()} for row in records]
        if (directory / RESULT_LINES).exists():
            results.lines = (directory / RESULT_LINES).read_text().splitlines()
        return results

    def add(
        self,
        scenario: str,
        overlay: str,
        pass_no: int,
        metrics: dict[str, tuple[float | None, str]],
        settings: dict[str, Any],
        status: str = "ok",
        state: State = State.OK,
        remark: str = "",
        columns: dict[str, Any] | None = None,
    ) -> None:
        """Record one pass: metrics maps name -> (value, unit); `columns` are extra
        columns of these rows (interval_s of a time series' point)."""
        for metric, (value, unit) in metrics.items():
            self.rows.append({
                "run_id": self.run_id, "scenario": scenario, "overlay": overlay,
                "variant": self.variant, "method": self.method, "pass": pass_no,
                "metric": metric, "value": value, "unit": unit, "state": state.value,
                "status": status, "remark": remark,
                **{f"set_{k}": v for k, v in settings.items()},
                **{f"var_{k}": v for k, v in self.variant_parameters.items()},
                **(columns or {}),
            })

    def frame(self) -> pd.DataFrame:
        frame = pd.DataFrame(self.rows)
        if frame.empty:
            return pd.DataFrame(columns=RESULT_COLUMNS)
        frame["value"] = pd.to_numeric(frame["value"], errors="coerce").astype("float64")
        return frame

    def write(self) -> None:
        """Write parquet, CSV and the RESULT lines; called after every pass."""
        frame = self.frame()
        write_atomic(self.directory / PARQUET, lambda path: frame.to_parquet(path, index=False))
        write_atomic(self.directory / CSV, lambda path: frame.to_csv(path, index=False))
        write_text_atomic(self.directory / RESULT_LINES,
                          "".join(f"{line}\n" for line in self.lines))


def result_line(
    scenario: str, overlay: str, pass_no: int, fields: dict[str, float | int | str | None]
) -> str:
    """The seed's one-line summary: `RESULT scenario=... overlay=... pass=N key=value ...`."""
    parts = [f"RESULT scenario={scenario}", f"overlay={overlay}", f"pass={pass_no}"]
    for key, value in fields.items():
        if isinstance(value, float):
            text = f"{value:.3f}" if abs(value) < 10 else f"{value:.1f}"
        else:
            text = "none" if value is None else str(value).replace(" ", "_")
        parts.append(f"{key}={text}")
    return " ".join(parts)


def load_results(directory: Path) -> pd.DataFrame:
    """The results frame; from the CSV copy (saying so) if the parquet file is damaged."""
    try:
        frame = pd.read_parquet(directory / PARQUET)
    except (OSError, ValueError) as damaged:
        if not (directory / CSV).exists():
            raise UserError(f"{directory / PARQUET} cannot be read ({damaged}) and there is "
                            f"no {CSV} beside it: the results of that directory are lost."
                            ) from None
        note(f"[yellow]{directory / PARQUET} cannot be read ({damaged}); using {CSV}[/]")
        frame = pd.read_csv(directory / CSV, keep_default_na=False,
                            na_values={"value": ["", "nan"]})
    return with_states(frame)


def with_states(frame: pd.DataFrame) -> pd.DataFrame:
    """Results written before states and remarks were columns, in today's columns."""
    if "state" not in frame.columns:
        frame = frame.assign(state=frame["status"].map(lambda s: state_of_status(str(s)).value))
    if "method" not in frame.columns:
        frame = frame.assign(method="")
    frame["method"] = frame["method"].fillna("")
    return frame if "remark" in frame.columns else frame.assign(remark="")
