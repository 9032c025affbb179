"""--json (stdout) and --json-file PATH (a file) mean the same on every command with a
result document (vnetbench/terminal/machine_output.py), and a --json-file never overwrites an
input."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from tests.conftest import history_build
from vnetbench.cli import app

runner = CliRunner()


@pytest.fixture
def builds(tmp_path: Path) -> Path:
    root = tmp_path / "builds"
    for day in (1, 2, 3):
        history_build(root, f"day{day}", f"2026-11-0{day}", 1.0)
    return root


def test_compare_json_is_the_whole_of_stdout_and_the_file_holds_the_same(
        data_copy: Callable[[str], Path], tmp_path: Path) -> None:
    quick = data_copy("results-quick")
    result = runner.invoke(app, ["compare", str(quick), str(quick), "--json",
                                 "--json-file", str(tmp_path / "c.json")])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)  # the markdown table is not printed beside it
    assert rows and {"scenario", "overlay", "metric", "ratio", "verdict"} <= set(rows[0])
    assert json.loads((tmp_path / "c.json").read_text()) == rows
    assert "cannot judge" in result.stderr  # the notes stay on stderr


def test_history_json_file_holds_what_json_prints(builds: Path, tmp_path: Path) -> None:
    out = tmp_path / "h"
    printed = runner.invoke(app, ["history", str(builds), "--out", str(out), "--json"])
    assert printed.exit_code == 0, printed.output
    written = runner.invoke(app, ["history", str(builds), "--out", str(out),
                                  "--json-file", str(tmp_path / "h.json")])
    assert written.exit_code == 0, written.output
    assert written.stdout.startswith("history: ")  # no --json: the human line
    assert json.loads((tmp_path / "h.json").read_text()) == json.loads(printed.stdout)


@pytest.mark.parametrize(("target", "said"), [
    ("run.json", "it lies inside results directory"),
    ("results.parquet", "it lies inside results directory"),
    ("new.json", "it lies inside results directory"), (".", "it is a directory")])
def test_json_file_inside_or_equal_to_an_input_is_refused_and_nothing_changes(
        data_copy: Callable[[str], Path], target: str, said: str) -> None:
    quick = data_copy("results-quick")
    before = {p: p.read_bytes() for p in quick.rglob("*") if p.is_file()}
    path = quick / target
    result = runner.invoke(app, ["compare", str(quick), str(quick), "--json-file",
                                 str(path)])
    assert result.exit_code == 2, result.output
    assert f"--json-file {path}: {said}" in " ".join(result.output.split())
    assert {p: p.read_bytes() for p in quick.rglob("*") if p.is_file()} == before


def test_history_json_file_in_a_directory_it_reads_is_refused(builds: Path) -> None:
    target = builds / "day1" / "history.json"
    result = runner.invoke(app, ["history", str(builds), "--json-file", str(target)])
    assert result.exit_code == 2, result.output
    assert "lies inside results directory" in result.output and not target.exists()


def test_ab_json_prints_the_verdicts_and_the_table_goes_to_stderr(
        data_copy: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    """The session itself recorded (an A/A of OpenVPN, tests/data/ab-aa-openvpn: one of
    the error-rate campaign's sessions, research/data/error-rates): what ab prints once
    the engine is done."""
    import vnetbench.runs.ab
    from vnetbench.generators.fileschemas import shipped
    from vnetbench.report.ab import verdict_summary

    recorded = data_copy("ab-aa-openvpn")
    monkeypatch.setattr(vnetbench.runs.ab, "run_ab", lambda *args, **kwargs: recorded)
    result = runner.invoke(app, ["ab", "throughput", "--out", str(tmp_path), "--json",
                                 "--json-file", str(tmp_path / "ab.json")])
    assert result.exit_code == (1 if verdict_summary(recorded)[2] else 0), result.output
    rows = json.loads(result.stdout)
    assert len(rows) == len((recorded / "verdicts.csv").read_text().splitlines()) - 1
    assert json.loads((tmp_path / "ab.json").read_text()) == rows
    assert "B/A [95 % interval]" in result.stderr
    jsonschema.validate(rows, shipped("ab.schema.json"))


def test_ab_json_keeps_each_pass_s_line_off_stdout(
        data_copy: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    """A pass prints its result line for people as it ends (runs/passes.py's emit): under
    --json it goes to stderr, or stdout would not parse."""
    import vnetbench.runs.ab
    from vnetbench.terminal.ui import out_console

    recorded = data_copy("ab-aa-openvpn")

    def measured(*args: object, **kwargs: object) -> Path:
        out_console.print("throughput openvpn pass 1: tcp_mbit=512.0")
        return recorded

    monkeypatch.setattr(vnetbench.runs.ab, "run_ab", measured)
    result = runner.invoke(app, ["ab", "throughput", "--out", str(tmp_path), "--json"])
    assert json.loads(result.stdout), result.output
    assert "pass 1: tcp_mbit=512.0" in result.stderr
