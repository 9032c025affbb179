from pathlib import Path

import pandas as pd

from vnetbench.analysis.results import ResultSet, has_kind, load_results, result_line
from vnetbench.core.outcome import Kind, Outcome, State
from vnetbench.core.schema import COLUMNS, CellKey

RESULT_COLUMNS = list(COLUMNS)


def test_result_line_format() -> None:
    line = result_line("throughput", "baseline", 2,
                       {"tcp_mbit": 16704.83, "rtt_ms": 0.0421, "pings": "200/200", "x": None})
    assert line == ("RESULT scenario=throughput overlay=baseline pass=2 tcp_mbit=16704.8 "
                    "rtt_ms=0.042 pings=200/200 x=none")


def test_tidy_frame_written_and_read_back(tmp_path: Path) -> None:
    results = ResultSet(tmp_path)
    results.add(CellKey("run-1", "throughput", "baseline"), 1,
                {"tcp_mbit": (1000.0, "Mbit/s"), "rtt_mean_ms": (None, "ms")},
                {"seconds": 2.0})
    results.lines.append("RESULT x")
    results.write()
    frame = load_results(tmp_path)
    assert list(frame.columns[: len(RESULT_COLUMNS)]) == RESULT_COLUMNS
    assert "set_seconds" in frame.columns
    assert frame["value"].dtype == "float64"
    assert frame.loc[frame.metric == "tcp_mbit", "value"].item() == 1000.0
    assert pd.isna(frame.loc[frame.metric == "rtt_mean_ms", "value"].item())
    assert (tmp_path / "results.csv").read_text().startswith("run_id,scenario")
    assert (tmp_path / "results.txt").read_text() == "RESULT x\n"


def test_empty_frame_has_schema(tmp_path: Path) -> None:
    assert list(ResultSet(tmp_path).frame().columns) == RESULT_COLUMNS


def test_a_run_without_time_series_reads_back_with_an_empty_interval_column(
        tmp_path: Path) -> None:
    """A pass with no timeline rows (vNet's failover on a path that delivers nothing)
    has no interval_s column on disk; readers select a pass's own values with
    `interval_s.isna()`, which must work on every results directory."""
    results = ResultSet(tmp_path)
    results.add(CellKey("run-1", "failover", "vnet"), 1, {"outage_ms": (None, "ms")}, {})
    results.write()
    assert "interval_s" not in pd.read_parquet(tmp_path / "results.parquet").columns
    frame = load_results(tmp_path)
    assert frame["interval_s"].isna().all()
    assert len(frame[frame["interval_s"].isna()]) == 1


def test_a_pass_s_problem_kinds_are_kept_and_older_results_read_them_from_the_status(
        tmp_path: Path) -> None:
    """Issue #59: what code reads of a status is a column (`kinds`), in the order said;
    a results file from before it was has the two kinds readers ask for read from the
    sentence, and none it cannot tell."""
    outcome = Outcome(State.PARTIAL)
    outcome.add(Kind.PARTIAL, "partial: 19 of 20 agents")
    outcome.add(Kind.OUTSIDE_LOAD, "measured under outside load: 0.53 cores busy")
    outcome.add(Kind.PARTIAL, "partial: one more")
    assert outcome.kinds == (Kind.PARTIAL, Kind.OUTSIDE_LOAD)
    results = ResultSet(tmp_path)
    cell = CellKey("run-1", "join", "baseline")
    results.add(cell, 1, {"join_s": (1.0, "s")}, {}, status=outcome.status,
                state=outcome.state, kinds=outcome.kinds)
    results.add(cell, 2, {"join_s": (1.1, "s")}, {})
    results.write()
    frame = load_results(tmp_path)
    assert list(frame["kinds"]) == ["partial,outside load", ""]
    assert list(has_kind(frame, Kind.OUTSIDE_LOAD)) == [True, False]
    assert not has_kind(frame, Kind.DEAD).any()
    # an older file: no kinds column
    old = pd.read_parquet(tmp_path / "results.parquet").drop(columns=["kinds"])
    old.loc[1, "status"] = "tcp_crr_tps implausible: 6 against 4284 TCP_RR/s"
    old.to_parquet(tmp_path / "results.parquet", index=False)
    frame = load_results(tmp_path)
    assert list(frame["kinds"]) == ["outside load", "implausible"]
    assert list(has_kind(frame, Kind.PARTIAL)) == [False, False]  # not told by a sentence
