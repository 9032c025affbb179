"""Report and compare on a small checked-in results directory (a real quick
matrix of the baseline overlay, 3 passes)."""

import shutil
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from vnetbench.analysis.results import load_results
from vnetbench.analysis.runrecord import RunRecord
from vnetbench.cli import app
from vnetbench.core.schema import CellKey
from vnetbench.overlays.baseline import Baseline
from vnetbench.report.compare import compare_frames
from vnetbench.report.markdown import NO_FIGURE, build_report, raw_line
from vnetbench.report.raw import RawCell
from vnetbench.report.tables import baseline_ratios, headline_table, summary_table
from vnetbench.runs.matrix import plan_cells
from vnetbench.scenarios import SCENARIOS

runner = CliRunner()


@pytest.fixture
def results_dir(data_copy: Callable[[str], Path]) -> Path:
    return data_copy("results-quick")


def test_summary_table_ranges(results_dir: Path) -> None:
    frame = load_results(results_dir)
    summary = summary_table(frame).set_index("metric")
    tcp = summary.loc["tcp_mbit"]
    assert tcp["n"] == 3
    values = frame[frame.metric == "tcp_mbit"]["value"]
    assert (tcp["low"], tcp["high"]) == (values.min(), values.max())
    headline = headline_table(summary_table(frame))
    assert headline["Measurement"].iloc[0] == "TCP between two agents (baseline)"


def test_report_written_with_plots(results_dir: Path) -> None:
    path, headline = build_report(results_dir)
    text = path.read_text()
    assert "| Measurement" in headline
    assert "AMD EPYC" in text or "Machine:" in text
    assert "Mbit/s" in text
    for plot in ("throughput.png", "rtt.png"):
        assert (results_dir / plot).stat().st_size > 5000
        assert f"({plot})" in text


def test_passes_said_measured_without_a_value_are_named_with_the_reason(
        results_dir: Path) -> None:
    """A pass whose rows are all empty vanishes from every table: the report lists it
    under its passes without numbers, and says so where the summary would be."""
    path = results_dir / "results.parquet"
    frame = pd.read_parquet(path)
    frame.assign(value=frame["value"].where(frame["pass"] != 2)).to_parquet(path)
    (results_dir / "results.csv").unlink(missing_ok=True)
    report_path, headline = build_report(results_dir)
    text = report_path.read_text()
    assert "| throughput | baseline | default | measured, but no row holds a value | 2 " in text
    assert "| 2 |" in headline  # the others' figures are still given, over 2 passes
    frame.assign(value=float("nan")).to_parquet(path)
    assert build_report(results_dir)[1] == NO_FIGURE


def test_ratios_against_baseline() -> None:
    summary = pd.DataFrame([
        {"scenario": "throughput", "overlay": "baseline", "variant": "default",
         "metric": "tcp_mbit", "mean": 16000.0},
        {"scenario": "throughput", "overlay": "wireguard", "variant": "default",
         "metric": "tcp_mbit", "mean": 1000.0},
    ])
    ratios = baseline_ratios(summary)
    assert ratios["ratio"].tolist() == [pytest.approx(1000 / 16000)]


def test_compare_against_itself_and_against_a_regression(results_dir: Path) -> None:
    frame = load_results(results_dir)
    same = compare_frames(frame, frame, threshold=0.05)
    assert set(same["verdict"]) <= {"no change", "no verdict", "shown, not judged"}
    slower = frame.copy()
    slower.loc[slower.metric == "tcp_mbit", "value"] *= 0.8
    floor = {"throughput/baseline/tcp_mbit": 5.0}
    verdicts = compare_frames(frame, slower, 0.05, floor).set_index("metric")["verdict"]
    assert verdicts["tcp_mbit"] == "worse"


def test_compare_cli_exit_status(results_dir: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["compare", str(results_dir), str(results_dir),
                                 "--json-file", str(tmp_path / "c.json")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "c.json").read_text().startswith("[")
    slower = tmp_path / "slower"
    shutil.copytree(results_dir, slower)
    frame = load_results(slower)
    frame.loc[frame.metric == "tcp_mbit", "value"] *= 0.8
    frame.to_parquet(slower / "results.parquet", index=False)
    result = runner.invoke(app, ["compare", str(results_dir), str(slower)])
    assert result.exit_code == 0  # no noise floor: shown, not judged
    assert "cannot judge" in result.output
    (slower / "noise.json").write_text(
        '{"metrics": {"throughput/baseline/tcp_mbit": {"noise_pct": 5.0}}}')
    result = runner.invoke(app, ["compare", str(results_dir), str(slower)])
    assert result.exit_code == 1
    assert "regression" in result.output


def test_report_on_a_directory_without_results(tmp_path: Path) -> None:
    result = runner.invoke(app, ["report", str(tmp_path)])
    assert result.exit_code == 2
    assert "holds no results.parquet" in result.output


def test_matrix_plans_every_applicable_cell() -> None:
    cells = plan_cells([Baseline()], list(SCENARIOS.values()))
    assert [c.key for c in cells] == ["throughput/baseline/default", "flood/baseline/default",
                                      "failover/baseline/default",
                                      "room/baseline/n20",
                                      "transactions/baseline/default",
                                      "loaded_latency/baseline/default"]


def test_comparison_table_of_a_dead_path_explains_it() -> None:
    from vnetbench.analysis.results import ResultSet
    from vnetbench.core.outcome import State
    from vnetbench.report.tables import comparison_table

    results = ResultSet(Path("/nonexistent"))
    results.add(CellKey("r", "throughput", "vnet"), 1, {"tcp_mbit": (None, "Mbit/s")}, {},
                status="path dead: 0 of 200 pings answered; TLS not in this build: measured "
                       "plain", state=State.DEAD, remark="TLS not in this build: measured plain")
    table = comparison_table(results.frame())
    row = table[table["metric"] == "status"].iloc[0]
    assert row["vnet"] == "path dead (TLS not in this build: measured plain)"


def test_where_the_time_went_per_cell_and_per_run() -> None:
    from vnetbench.report.document import timing_table
    from vnetbench.runs.cells import summed_timings

    stacks = [{"scenario": "join", "passes": [1], "bring_up_s": 9.0, "measure_s": 4.0,
               "teardown_s": 7.0},
              {"scenario": "join", "passes": [2], "bring_up_s": 8.0, "measure_s": 5.0,
               "teardown_s": 7.0}]
    cell = summed_timings(stacks)
    assert cell == {"bring_up_s": 17.0, "restart_s": 0.0, "measure_s": 9.0,
                    "teardown_s": 14.0}  # a record from before restarts: none
    matrix = timing_table(RunRecord(cell_timings={"join/wireguard/n50": cell}))
    assert matrix.iloc[0]["total s"] == 40.0 and matrix.iloc[0]["testbed share"] == "78 %"
    kept = {"bring_up_s": 9.0, "restart_s": 2.0, "measure_s": 7.0, "teardown_s": 2.0}
    row = timing_table(RunRecord(cell_timings={"join/wireguard/n50": kept})).iloc[0]
    assert row["restarts s"] == 2.0 and row["testbed share"] == "65 %"  # 13 of 20 s
    run = timing_table(RunRecord(timings=stacks))
    assert list(run["cell"]) == ["join passes [1]", "join passes [2]"]
    assert "not recorded" in timing_table(RunRecord()).iloc[0, 0]


def test_one_column_per_overlay_with_range_n_cv_and_ratio() -> None:
    from vnetbench.report.tables import overlay_tables

    rows = [{"scenario": "throughput", "overlay": overlay, "variant": "default",
             "metric": "tcp_mbit", "unit": "Mbit/s", "value": value, "state": "ok",
             "pass": p} for overlay, values in (("baseline", (16000.0, 15000.0)),
                                                ("wireguard", (600.0, 500.0)))
            for p, value in enumerate(values, 1)]
    rows += [{"scenario": "join", "overlay": "wireguard", "variant": "n20",
              "metric": "join_seconds", "unit": "s", "value": 0.3, "state": "ok", "pass": 1}]
    tables = overlay_tables(summary_table(pd.DataFrame(rows)))
    assert list(tables) == ["throughput", "join"]
    tcp = tables["throughput"].iloc[0]
    assert list(tables["throughput"].columns) == ["measurement", "variant", "baseline",
                                                  "wireguard"]
    assert tcp["measurement"] == "TCP between two agents"
    assert tcp["baseline"].startswith("15000 to 16000 Mbit/s (n 2, CV")
    assert tcp["wireguard"].endswith("0.0355x baseline")  # 550 / 15500
    assert list(tables["join"].columns) == ["measurement", "variant", "wireguard"]


def test_the_machines_limit_is_bracketed_and_its_move_said() -> None:
    from vnetbench.report.document import raw_limit_text
    from vnetbench.runs.matrix import bracketed

    first = {"raw_veth_mbit": 14800.0, "raw_veth_passes": [14800.0, 15000.0, 14000.0],
             "seconds": 10}
    both = bracketed(first, {"raw_veth_mbit": 33000.0, "raw_veth_passes": [33000.0],
                             "seconds": 10})
    assert both["raw_veth_mbit"] == 33000.0  # a busy moment lowers it; nothing raises it
    assert both["raw_veth_passes"] == [33000.0]  # the passes of the bracket it came from
    assert both["moved_percent"] == pytest.approx(100 * (33000 - 14800) / 33000)
    text = raw_limit_text(RunRecord(calibration=both))
    assert "14800 and 33000 Mbit/s" in text and "moved 55 %" in text
    failed = bracketed(first, {"error": "no veth here"})
    assert failed["raw_veth_mbit"] == 14800.0 and "before the first cell only" in \
        raw_limit_text(RunRecord(calibration=failed))


def test_a_cell_with_a_record_per_machine_lists_a_dozen_and_counts_the_rest() -> None:
    files = [Path(f"runs/r/room/raw/room-pass1-agent{n}.txt") for n in range(1, 51)]
    cell = RawCell("room", "wireguard", "n20", "r", Path("runs/r"), files)
    line = raw_line(cell)
    assert line.count("](runs/r/room/raw/") == 12
    assert line.endswith("and 38 more in the folder")
