"""The exit status as a contract: the decision from a run's passes (recorded results,
their states changed as a dead path or a failed tool leaves them), the measuring
commands' ends (their runs replaced by recorded results: no engine), the
environment's status 3, the root's --version and a repeated option refused."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from typer.testing import CliRunner

from vnetbench import __version__
from vnetbench.analysis.results import PARQUET, load_results
from vnetbench.cli import app
from vnetbench.commands.common import repeated_option
from vnetbench.core.outcome import State
from vnetbench.core.schema import OVERLAY, PASS, SCENARIO, STATE, STATUS
from vnetbench.terminal.exitstatus import (
    MEANINGS,
    ExitStatus,
    FailedCell,
    failed_cells,
    failure_summary,
    help_epilog,
    passes_status,
)

DATA = Path(__file__).parents[2] / "data"
NAMED = DATA / "results-named"  # five scenarios on baseline and wireguard, every pass ok
runner = CliRunner()


def with_states(frame: pd.DataFrame, scenario: str, overlay: str, passes: set[int],
                state: State) -> pd.DataFrame:
    """The recorded frame with the passes of one cell ended as `state` (the status
    sentence as a pass of that state begins)."""
    rows = ((frame[SCENARIO] == scenario) & (frame[OVERLAY] == overlay)
            & frame[PASS].isin(passes))
    frame = frame.copy()
    frame.loc[rows, STATE] = state.value
    frame.loc[rows, STATUS] = f"{state.value}: as recorded for the test"
    return frame


def recorded(tmp_path: Path, frame: pd.DataFrame | None = None) -> Path:
    """A results directory holding the recorded results (or `frame` in their place)."""
    directory = tmp_path / "results"
    shutil.copytree(NAMED, directory)
    if frame is not None:
        frame.to_parquet(directory / PARQUET, index=False)
        (directory / "results.csv").unlink(missing_ok=True)
    return directory


def test_recorded_results_with_every_pass_ok_exit_0() -> None:
    assert failed_cells(load_results(NAMED)) == []
    assert passes_status([], allow_failed=False) is ExitStatus.OK


def test_a_dead_path_and_a_failed_tool_are_misses_named_by_cell() -> None:
    frame = with_states(load_results(NAMED), "throughput", "wireguard", {1, 2}, State.DEAD)
    frame = with_states(frame, "room", "baseline", {2}, State.FAILED)
    failed = failed_cells(frame)
    assert {(c.scenario, c.overlay, c.passes, c.states) for c in failed} == {
        ("throughput", "wireguard", (1, 2), ("path dead",)),
        ("room", "baseline", (2,), ("failed",))}
    assert passes_status(failed, allow_failed=False) is ExitStatus.MISSED == 1
    assert passes_status(failed, allow_failed=True) is ExitStatus.OK


@pytest.mark.parametrize("state", [State.PARTIAL, State.NOT_APPLICABLE, State.UNSUPPORTED])
def test_partial_not_applicable_and_not_supported_passes_are_no_miss(state: State) -> None:
    """Partial measured what took part; the others were never meant to run."""
    frame = with_states(load_results(NAMED), "join", "wireguard", {1, 2}, state)
    assert failed_cells(frame) == []


def test_results_written_before_states_were_a_column_are_judged_by_status(
        tmp_path: Path) -> None:
    """An older file has no `state`: the status sentence says it (load_results)."""
    frame = with_states(load_results(NAMED), "transactions", "baseline", {2}, State.DEAD)
    directory = recorded(tmp_path, frame.drop(columns=[STATE]))
    failed = failed_cells(load_results(directory))
    assert [(c.scenario, c.overlay, c.passes) for c in failed] == [
        ("transactions", "baseline", (2,))]


def test_the_summary_is_one_line_naming_each_cell_and_what_exits() -> None:
    failed = [FailedCell("throughput", "wireguard", "default", (1, 2), ("path dead",)),
              FailedCell("throughput", "tinc", "mtu-1400", (3,), ("failed",))]
    said = failure_summary(failed, allow_failed=False)
    assert "\n" not in said
    assert said.startswith("3 failed pass(es) in 2 cell(s): ")
    assert "throughput on wireguard: passes 1, 2 path dead" in said
    assert "throughput on tinc (mtu-1400): pass 3 failed" in said
    assert said.endswith("exit 1 (give --allow-failed to exit 0 anyway)")
    assert failure_summary(failed, allow_failed=True).endswith("exit 0 (--allow-failed)")


def test_the_table_holds_every_status_once_in_order() -> None:
    assert [status for status, _ in MEANINGS] == [0, 1, 2, 3, 130]
    epilog = help_epilog()
    assert all(f"{status.value:>3}  {meaning}" in epilog for status, meaning in MEANINGS)


def test_the_root_help_shows_the_table_and_the_version_flag() -> None:
    result = runner.invoke(app, ["--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert "Exit status:" in result.output and "130  interrupted" in result.output
    version = runner.invoke(app, ["--version"])
    assert (version.exit_code, version.output) == (0, f"{__version__}\n")
    assert runner.invoke(app, ["version"]).output == version.output


# The measuring commands' ends, their runs replaced by a recorded results directory.
def fake_run(monkeypatch: pytest.MonkeyPatch, directory: Path) -> None:
    import vnetbench.engines as engines
    import vnetbench.runs.comparison as comparison
    import vnetbench.runs.matrix as matrix
    import vnetbench.runs.sweep as sweep

    monkeypatch.setattr(comparison, "run_overlays", lambda *_, **__: directory)
    monkeypatch.setattr(matrix, "run_matrix", lambda *_, **__: directory)
    monkeypatch.setattr(sweep, "run_sweep", lambda *_, **__: directory)
    monkeypatch.setattr(engines, "require_engine", lambda: None)


COMMANDS = {
    "run": ["run", "throughput", "--overlay", "wireguard"],
    "matrix": ["matrix", "--overlay", "wireguard"],
    "sweep": ["sweep", "throughput", "--set", "backbone.loss=0,100%"],
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_measuring_command_exits_1_on_a_dead_path_unless_allowed(
        command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dead = with_states(load_results(NAMED), "throughput", "wireguard", {2}, State.DEAD)
    fake_run(monkeypatch, recorded(tmp_path, dead))
    args = [*COMMANDS[command], "--out", str(tmp_path / "out")]
    result = runner.invoke(app, args)
    said = " ".join(result.output.split())
    assert result.exit_code == 1, said
    assert "1 failed pass(es) in 1 cell(s): throughput on wireguard: pass 2 path dead" in said
    allowed = runner.invoke(app, [*args, "--allow-failed"])
    assert allowed.exit_code == 0, allowed.output
    assert "exit 0 (--allow-failed)" in " ".join(allowed.output.split())


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_measuring_command_whose_passes_all_measured_exits_0(
        command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_run(monkeypatch, recorded(tmp_path))
    result = runner.invoke(app, [*COMMANDS[command], "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "failed pass" not in result.output


def test_capacity_exits_1_when_no_size_met_the_target(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import vnetbench.runs.capacity as capacity
    import vnetbench.runs.comparison as comparison
    from vnetbench.overlays import overlay_for

    def searched(steps: list[Any]) -> Any:
        def run(plan: Any, out_dir: Path) -> tuple[Path, capacity.Search]:
            search = capacity.Search(10, 40, 0.1, whole=True)
            search.steps = steps
            return tmp_path, search
        return run

    monkeypatch.setattr(comparison, "require_overlays",
                        lambda topology, names: {n: overlay_for(topology, n) for n in names})
    args = ["capacity", "--slo", "p99=50ms", "--overlay", "wireguard", "--max", "40",
            "--out", str(tmp_path)]
    monkeypatch.setattr(capacity, "run_capacity",
                        searched([capacity.Step(10, met=False, said="p99 80 ms")]))
    missed = runner.invoke(app, args)
    assert missed.exit_code == 1, missed.output
    assert "no size met p99=50ms" in missed.output
    monkeypatch.setattr(capacity, "run_capacity", searched(
        [capacity.Step(10, met=True, said="p99 9 ms"), capacity.Step(20, met=False,
                                                                     said="p99 80 ms")]))
    met = runner.invoke(app, args)
    assert met.exit_code == 0, met.output


def test_no_engine_is_the_environments_status_3(tmp_path: Path) -> None:
    """`sweep` asks the engine before it starts: none answers here."""
    result = runner.invoke(app, ["sweep", "throughput", "--set", "backbone.loss=0,1%",
                                 "--out", str(tmp_path)],
                           env={"DOCKER_HOST": "unix:///nonexistent"})
    assert result.exit_code == 3, result.output
    assert "The Docker engine does not answer" in " ".join(result.output.split())


@pytest.mark.parametrize(("args", "named"), [
    (["run", "throughput", "--overlay", "wireguard", "--overlay", "tinc"],
     "--overlay wireguard and --overlay tinc"),
    (["run", "throughput", "--baseline", "--no-baseline"], "--baseline and --no-baseline"),
    (["run", "throughput", "--seconds=3", "--seconds", "4"], "--seconds=3 and --seconds 4"),
    (["capacity", "--slo", "p99=50ms", "--overlay", "wireguard", "--overlay", "tinc"],
     "--overlay wireguard and --overlay tinc"),
    (["compare", "a", "b", "--fail-over", "5%", "--fail-over", "10%"],
     "--fail-over 5% and --fail-over 10%"),
])
def test_an_option_given_twice_is_refused_exit_2(args: list[str], named: str,
                                                 tmp_path: Path) -> None:
    result = runner.invoke(app, [*args, "--out", str(tmp_path)] if args[0] != "compare"
                           else args, env={"DOCKER_HOST": "unix:///nonexistent"})
    said = " ".join(result.output.split())
    assert result.exit_code == 2, said
    assert f"{named}: one option given 2 times" in said
    assert not list(tmp_path.iterdir())


def test_a_list_option_may_repeat_and_a_value_that_looks_like_an_option_is_a_value() -> None:
    import click

    params = [click.Option(["--overlay"], multiple=True), click.Option(["--topology", "-t"]),
              click.Option(["--seconds"]), click.Option(["--baseline/--no-baseline"])]
    assert repeated_option(params, ["--overlay", "a", "--overlay", "b"]) == []
    assert repeated_option(params, ["--seconds", "--seconds"]) == []  # its value
    assert repeated_option(params, ["-t", "a.yml", "--topology", "b.yml"]) == [
        "-t a.yml", "--topology b.yml"]
    assert repeated_option(params, ["x", "--", "--seconds", "1", "--seconds", "2"]) == []


def test_a_pass_that_measured_nothing_still_leaves_its_state(tmp_path: Path) -> None:
    """room's server that never served returns no metric: its failed pass is a row
    (`skipped`), so the exit status (and the report) read it back."""
    from vnetbench.analysis.results import ResultSet
    from vnetbench.core.outcome import Kind, single
    from vnetbench.core.schema import CellKey
    from vnetbench.runs.passes import write_pass
    from vnetbench.scenarios.base import PassResult

    results = ResultSet(tmp_path)
    failed = PassResult({}, {}, single(State.FAILED, Kind.FAILED, "the server never served"))
    write_pass(results, CellKey("r1", "room", "wireguard"), 1, failed, {}, "")
    assert [(c.scenario, c.passes) for c in failed_cells(load_results(tmp_path))] == [
        ("room", (1,))]


def test_the_docs_table_is_the_help_table() -> None:
    page = (Path(__file__).parents[3] / "docs" / "exit-status.md").read_text()
    rows = [line for line in page.splitlines() if line.startswith("| ") and "---" not in line]
    assert rows[1:] == [f"| {status.value} | {meaning} |" for status, meaning in MEANINGS]
