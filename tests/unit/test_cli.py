"""User errors: one paragraph, exit status 2, no traceback."""

from pathlib import Path

from typer.testing import CliRunner

from vnetbench.cli import app

runner = CliRunner()


def test_validate_good_file() -> None:
    result = runner.invoke(app, ["validate", "topologies/two-sites.yml"])
    assert result.exit_code == 0
    assert "ok (baseline, 2 switch(es), 2 agent(s))" in result.output


def test_validate_bad_file_exit_2_without_traceback(tmp_path: Path) -> None:
    path = tmp_path / "bad.yml"
    path.write_text("name: t\nswitches: 1\nagents: [{name: a, switch: nowhere}]\n")
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == 2
    assert "unknown switch 'nowhere'" in result.output
    assert "Traceback" not in result.output


def test_run_unknown_scenario_and_overlay(tmp_path: Path) -> None:
    result = runner.invoke(app, ["run", "warp-speed", "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert "no scenario called 'warp-speed'" in result.output
    result = runner.invoke(app, ["run", "throughput", "--overlay", "carrier-pigeon"])
    assert result.exit_code == 2
    assert "no overlay called 'carrier-pigeon'" in result.output
    assert not list(tmp_path.iterdir())  # nothing started, nothing written


def test_negative_seconds_rejected() -> None:
    result = runner.invoke(app, ["run", "throughput", "--seconds", "-3"])
    assert result.exit_code == 2
    assert "settings.seconds" in result.output
