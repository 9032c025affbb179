"""`vnetbench compare` judges two sessions only against a measured noise floor, on
recorded results: the two arms of a real A/A (tests/data/ab-aa-baseline, the
baseline path, 6 bring-ups each, one build) as two runs of one build, and a quick
matrix (tests/data/results-quick)."""

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from vnetbench.analysis.results import PARQUET, load_results
from vnetbench.cli import app
from vnetbench.core.schema import VARIANT
from vnetbench.report.ab import NOISE_FILE
from vnetbench.report.compare import NO_FLOOR, compare_frames

runner = CliRunner()


def one_line(output: str) -> str:
    return " ".join(output.split())


def names(output: str, path: Path) -> bool:
    """Whether the output names path: the console breaks a word longer than its width
    (a pytest-xdist worker's tmp path is), so whitespace inside the path is ignored."""
    return str(path) in "".join(output.split())


@pytest.fixture
def two_runs(data_copy: Callable[[str], Path], tmp_path: Path) -> tuple[Path, Path, Path]:
    """The A/A's arms as two results directories of one build (OLD: arm A, NEW: arm
    B, neither with a noise.json), and the A/A itself (its noise.json, the floor)."""
    aa = data_copy("ab-aa-baseline")
    frame = load_results(aa)
    runs = []
    for arm in ("A", "B"):
        directory = tmp_path / f"run-{arm}"
        directory.mkdir()
        shutil.copy(aa / "run.json", directory / "run.json")
        frame[frame[VARIANT] == arm].assign(**{VARIANT: "default"}).to_parquet(
            directory / PARQUET, index=False)
        runs.append(directory)
    return runs[0], runs[1], aa


def slower(directory: Path, destination: Path, metric: str, factor: float) -> Path:
    shutil.copytree(directory, destination)
    frame = load_results(destination)
    frame.loc[frame.metric == metric, "value"] *= factor
    frame.to_parquet(destination / PARQUET, index=False)
    return destination


def compared(tmp_path: Path, *args: str) -> tuple[int, str, pd.DataFrame]:
    table = tmp_path / "compare.json"
    table.unlink(missing_ok=True)
    result = runner.invoke(app, ["compare", *args, "--json-file", str(table)])
    rows = pd.DataFrame(json.loads(table.read_text())) if table.exists() else pd.DataFrame()
    return result.exit_code, one_line(result.output), rows


def test_two_runs_of_one_build_without_a_floor_cannot_be_judged(
        two_runs: tuple[Path, Path, Path], tmp_path: Path) -> None:
    old, new, _ = two_runs
    exit_code, output, rows = compared(tmp_path, str(old), str(new))
    assert exit_code == 0, output
    assert "cannot judge: no noise floor measured" in output
    assert "vnetbench ab SCENARIO' with no --b" in output
    assert "regression" not in output
    wanted = rows[rows["verdict"] != "shown, not judged"].set_index("metric")
    assert len(wanted) >= 4  # tcp_mbit, the minimum RTT, ping loss and received
    unjudged = wanted[wanted["verdict"] == "no verdict"]
    assert set(unjudged.index) >= {"tcp_mbit", "rtt_min_ms"}
    assert "rtt_mean_ms" not in wanted.index  # declared noisy: shown, not judged
    assert set(unjudged["reason"]) == {NO_FLOOR}
    # only what no drift can move is called: the same value in every pass (no loss)
    assert set(wanted.drop(unjudged.index)["reason"]) <= {"the same in every pass of both"}
    # the differences are still shown: NEW/OLD and its interval per metric
    assert wanted["ratio"].notna().all() and (wanted["ci_low"] <= wanted["ci_high"]).all()


def test_a_real_regression_without_a_floor_is_shown_not_judged(
        two_runs: tuple[Path, Path, Path], tmp_path: Path) -> None:
    old, new, _ = two_runs
    worse = slower(new, tmp_path / "worse", "tcp_mbit", 0.5)
    exit_code, output, rows = compared(tmp_path, str(old), str(worse))
    assert exit_code == 0, output
    assert "cannot judge" in output
    tcp = rows.set_index("metric").loc["tcp_mbit"]
    assert tcp["verdict"] == "no verdict" and tcp["ratio"] == pytest.approx(0.5, rel=0.1)


def test_with_the_a_a_floor_two_runs_of_one_build_are_no_change(
        two_runs: tuple[Path, Path, Path], tmp_path: Path) -> None:
    old, new, aa = two_runs
    exit_code, output, rows = compared(tmp_path, str(old), str(new), "--noise", str(aa))
    assert exit_code == 0, output
    assert "noise floor: the A/A in" in output and names(output, aa)
    assert "cannot judge" not in output
    wanted = rows[rows["verdict"] != "shown, not judged"]
    assert len(wanted) >= 4 and wanted["noise_pct"].notna().sum() >= 3
    assert (wanted["verdict"] == "no change").mean() >= 0.95, wanted


def test_with_the_a_a_floor_a_change_beyond_it_is_a_regression(
        two_runs: tuple[Path, Path, Path], tmp_path: Path) -> None:
    old, new, aa = two_runs
    floor = json.loads((aa / NOISE_FILE).read_text())["metrics"]
    tcp_floor = floor["throughput/baseline/tcp_mbit"]["noise_pct"]
    worse = slower(new, tmp_path / "worse", "tcp_mbit", 1 - 2 * tcp_floor / 100)
    exit_code, output, rows = compared(tmp_path, str(old), str(worse), "--noise", str(aa))
    assert exit_code == 1, output
    assert "1 regression(s) beyond 5%" in output and "throughput/baseline/tcp_mbit" in output
    tcp = rows.set_index("metric").loc["tcp_mbit"]
    assert tcp["verdict"] == "worse" and "beyond this machine's noise" in tcp["reason"]


def test_a_floor_in_new_is_found_without_noise(
        two_runs: tuple[Path, Path, Path], tmp_path: Path) -> None:
    old, new, aa = two_runs
    shutil.copy(aa / NOISE_FILE, new / NOISE_FILE)
    exit_code, output, _ = compared(tmp_path, str(old), str(new), "--require-noise-floor")
    assert exit_code == 0, output
    assert "noise floor: the A/A in" in output and names(output, new)


def test_require_noise_floor_refuses_a_comparison_without_one(
        two_runs: tuple[Path, Path, Path], tmp_path: Path) -> None:
    old, new, _ = two_runs
    exit_code, output, rows = compared(tmp_path, str(old), str(new), "--require-noise-floor")
    assert exit_code == 2, output
    assert output.startswith("error: compare --require-noise-floor: no noise floor")
    assert "'vnetbench ab SCENARIO' with no --b" in output and "--noise AA_DIR" in output
    assert "Traceback" not in output and output.count("error:") == 1
    assert rows.empty  # refused before anything was compared or written


def test_require_noise_floor_refuses_a_floor_of_other_metrics(
        two_runs: tuple[Path, Path, Path], tmp_path: Path,
        data_dir: Path) -> None:
    old, _, aa = two_runs
    quick = data_dir / "results-quick"
    other = tmp_path / "other-floor"
    other.mkdir()
    record = json.loads((aa / NOISE_FILE).read_text())
    record["metrics"] = {key.replace("/baseline/", "/wireguard/"): value
                         for key, value in record["metrics"].items()}
    (other / NOISE_FILE).write_text(json.dumps(record))
    exit_code, output, _ = compared(tmp_path, str(quick), str(quick), "--noise", str(other),
                                    "--require-noise-floor")
    assert exit_code == 2, output
    assert "has no figure for any metric compared here" in output
    # without the option, the same comparison shows them, unjudged
    exit_code, output, rows = compared(tmp_path, str(quick), str(quick), "--noise", str(other))
    assert exit_code == 0 and "cannot judge" in output
    tcp = rows.set_index("metric").loc["tcp_mbit"]
    assert (tcp["verdict"], tcp["reason"]) == ("no verdict", NO_FLOOR)
    del old


def test_compare_frames_judges_only_metrics_with_a_floor(data_dir: Path) -> None:
    frame = load_results(data_dir / "results-quick")
    halved = frame.copy()
    halved.loc[halved.metric == "tcp_mbit", "value"] *= 0.5
    unjudged = compare_frames(frame, halved, 0.05).set_index("metric")
    assert unjudged.loc["tcp_mbit", "verdict"] == "no verdict"
    judged = compare_frames(frame, halved, 0.05,
                            {"throughput/baseline/tcp_mbit": 5.0}).set_index("metric")
    assert judged.loc["tcp_mbit", "verdict"] == "worse"
    assert judged.loc["rtt_min_ms", "verdict"] == "no verdict"  # no figure for it
