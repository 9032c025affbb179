"""The root's own options: -q/--quiet and -v/--verbose."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vnetbench.cli import app
from vnetbench.terminal import ui

runner = CliRunner()


@pytest.fixture(autouse=True)
def normal_again() -> Iterator[None]:
    """An invocation sets the level for the process: the next test starts from normal."""
    yield
    ui.set_verbosity(ui.NORMAL)


def export(quick: Path, tmp_path: Path, *root: str) -> str:
    result = runner.invoke(app, [*root, "export", str(quick), "--format", "bencher",
                                 "-o", str(tmp_path / "x.json")])
    assert result.exit_code == 0, result.output
    return result.stderr


def test_quiet_drops_the_notes_and_keeps_the_result(
        data_copy: Callable[[str], Path], tmp_path: Path) -> None:
    quick = data_copy("results-quick")
    assert "figures of" in export(quick, tmp_path)
    assert "figures of" not in export(quick, tmp_path, "-q")
    assert (tmp_path / "x.json").read_text().startswith("{")
    assert "figures of" not in export(quick, tmp_path, "--quiet")


def test_verbose_names_the_environment_variables_in_effect(
        data_copy: Callable[[str], Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    quick = data_copy("results-quick")
    monkeypatch.setenv("VNETBENCH_STATE", str(tmp_path / "state"))
    monkeypatch.setenv("UNRELATED_SECRET", "x")
    said = export(quick, tmp_path, "-v")
    assert f"environment: VNETBENCH_STATE={tmp_path / 'state'}" in said
    assert "UNRELATED_SECRET" not in said and "figures of" in said
    assert "environment:" not in export(quick, tmp_path)


def test_quiet_and_verbose_together_are_refused_in_one_paragraph() -> None:
    result = runner.invoke(app, ["-q", "-v", "version"])
    assert result.exit_code == 2
    assert "-q/--quiet and -v/--verbose ask for opposite things" in result.output
    assert "Traceback" not in result.output and "╭" not in result.output


def test_waits_and_notes_at_each_level(capsys: pytest.CaptureFixture[str]) -> None:
    ui.set_verbosity(ui.QUIET)
    with ui.waiting("bringing up"):
        pass
    ui.note("a note")
    ui.note("a warning", style="yellow")
    quiet = capsys.readouterr().err
    assert "bringing up" not in quiet and "a note" not in quiet and "a warning" in quiet
    ui.set_verbosity(ui.VERBOSE)
    with ui.waiting("bringing up"):
        pass
    assert "… bringing up" in capsys.readouterr().err
