"""Inputs that are wrong whatever the engine says, refused before it is asked or any
work is done (issue #61; each found by tests/unit/test_cli_fuzz.py): exit 2, one
paragraph, and neither require_engine nor any process reached."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

import vnetbench.engines as engines
from vnetbench.cli import app

runner = CliRunner()


class Asked(BaseException):
    """The engine was asked."""


def refused(args: list[str], monkeypatch: pytest.MonkeyPatch) -> str:
    """The paragraph a refusal prints, the engine never asked; whitespace folded."""
    def ask(*_args: object, **_kwargs: object) -> None:
        raise Asked(" ".join(args))

    monkeypatch.setattr(engines, "require_engine", ask)
    monkeypatch.setattr(subprocess.Popen, "__init__", ask)
    result = runner.invoke(app, args, env={"DOCKER_HOST": "unix:///nonexistent"})
    assert isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: ") and "\n\n" not in result.output.strip()
    return " ".join(result.output.split())


@pytest.mark.parametrize("nodes", ["1", "6", "-291", "1000000000000000000000000000000"])
def test_swarm_up_refuses_a_node_count_before_the_engine(
        nodes: str, monkeypatch: pytest.MonkeyPatch) -> None:
    said = refused(["swarm", "up", "--nodes", nodes], monkeypatch)
    assert f"A test swarm has 2 to 5 nodes, not {nodes}" in said


@pytest.mark.parametrize(("programs", "profile", "expected"), [
    ("{tmp}/none", None, "The programs directory {tmp}/none lacks {tmp}/none/conductor"),
    ("{tmp}/file", None, "The programs directory {tmp}/file lacks"),
    ("{tmp}", None, "The programs directory {tmp} lacks {tmp}/conductor"),
    ("{tmp}", "{tmp}/none.yml", "{tmp}/none.yml"),
    ("{tmp}", "{tmp}/file", "{tmp}/file"),
])
def test_images_vnet_refuses_its_programs_and_profile_before_the_engine(
        programs: str, profile: str | None, expected: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "file").write_text("not a profile: [\n")
    args = ["images", "vnet", "--programs", programs]
    args += ["--vnet-profile", profile] if profile else []
    said = refused([a.replace("{tmp}", str(tmp_path)) for a in args], monkeypatch)
    assert expected.replace("{tmp}", str(tmp_path)) in said


@pytest.mark.parametrize(("args", "expected"), [
    (["\x1b[2J"], "'\\x1b[2J': down needs the id of a run"),
    (["../x"], "'../x': down needs the id of a run"),
    (["\u2603"], "down needs the id of a run"),
    (["x" * 5000], "'" + "x" * 80 + "'...: down needs"),
    (["two-sites", "--out", "{tmp}/file"], "--out {tmp}/file: there is no directory"),
    (["two-sites", "--out", "{tmp}/file/x"], "--out {tmp}/file/x: there is no directory"),
])
def test_down_refuses_an_impossible_run_id_or_out_before_the_engine(
        args: list[str], expected: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "file").write_text("")
    said = refused(["down", *[a.replace("{tmp}", str(tmp_path)) for a in args]], monkeypatch)
    assert expected.replace("{tmp}", str(tmp_path)) in said


@pytest.mark.parametrize("out", ["{tmp}/file", "{tmp}/file/x", "/proc/vnetbench-test"])
def test_up_refuses_an_out_it_cannot_write_before_the_engine(
        out: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "file").write_text("")
    out = out.replace("{tmp}", str(tmp_path))
    assert f"--out {out}" in refused(["up", "--out", out], monkeypatch)


DATA = Path(__file__).parent.parent.parent / "data"


@pytest.mark.parametrize("args", [
    ["export", str(DATA / "results-quick"), "--format", "github", "-o", "/proc/vnetbench-x"],
    ["export", str(DATA / "results-quick"), "--format", "bencher", "-o", "/proc/vnetbench-x"],
    ["compare", str(DATA / "results-quick"), str(DATA / "results-quick"), "--json",
     "/proc/vnetbench-x"],
])
def test_an_output_file_where_none_can_be_made_is_refused_first(
        args: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """/proc exists, but no file can be made in it: a FileNotFoundError traceback after
    the work was done."""
    assert "/proc cannot be written (No such file or directory)" in refused(args, monkeypatch)
