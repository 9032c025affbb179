"""`run --workload`: a workload file or a profile's name for the room, refused
before anything starts (exit 2, one message, every problem) when it cannot run."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from vnetbench.cli import app

runner = CliRunner()


def invoke(args: list[str], out: Path) -> tuple[int, str]:
    result = runner.invoke(app, [*args, "--out", str(out)],
                           env={"DOCKER_HOST": "unix:///nonexistent"})
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"{args}: {result.exception!r}")
    assert "Traceback" not in result.output
    return result.exit_code, " ".join(result.output.split())


def test_an_unknown_profile_is_refused_naming_the_shipped_ones(tmp_path: Path) -> None:
    code, said = invoke(["run", "room", "--workload", "nope"], tmp_path / "out")
    assert code == 2
    assert "There is no workload profile named 'nope'. Give one of contest" in said
    assert not (tmp_path / "out").exists()


def test_a_workload_given_to_a_run_without_a_room_is_refused(tmp_path: Path) -> None:
    code, said = invoke(["run", "throughput", "--workload", "contest"], tmp_path / "out")
    assert code == 2
    assert ("--workload contest: throughput runs no workload, so it would be ignored. "
            "Run room with --workload") in said


def test_a_bad_workload_file_gives_every_problem_at_once(tmp_path: Path) -> None:
    bad = tmp_path / "w.yml"
    bad.write_text("phases:\n  - {name: a, seconds: 0, mix: [{name: p, size: 1, rate: 0}]}\n"
                   "  - {name: b, seconds: 5}\n")
    code, said = invoke(["run", "room", "--workload", str(bad)], tmp_path / "out")
    assert code == 2
    assert f"{bad} is not a valid workload (3 problem(s))" in said
    assert "phases.0.seconds" in said and "phases.0.mix.0.rate" in said
    assert "phases.1: the phase asks nothing" in said
    assert not (tmp_path / "out").exists()


def test_a_workload_the_room_cannot_run_is_refused_before_anything_starts(
        tmp_path: Path) -> None:
    code, said = invoke(["run", "room", "--workload", "contest", "--room-loop", "closed",
                         "--machines", "4"], tmp_path / "out")
    assert code == 2
    assert "the room cannot run its workload (1 problem(s))" in said
    assert "a workload runs on the open loop" in said
    assert not (tmp_path / "out").exists()


def test_capacity_refuses_a_target_of_a_phase_its_workload_lacks(tmp_path: Path) -> None:
    code, said = invoke(["capacity", "--slo", "p99@lunch=50ms,last@statement=10s",
                         "--workload", "contest", "--by", "rate"], tmp_path / "out")
    assert code == 2
    assert ("capacity --slo p99@lunch=50ms,last@statement=10s: the search cannot start "
            "(2 problem(s)):") in said
    assert "p99@lunch: the workload has no phase lunch" in said
    assert "--by rate: a workload sets each kind's own rate" in said
    assert not (tmp_path / "out").exists()
