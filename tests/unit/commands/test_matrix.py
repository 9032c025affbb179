"""matrix --overlay takes run's and sweep's form (names separated by commas) as well as
the option repeated; either way each name is checked, and one named twice is refused,
before the engine is asked."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from vnetbench.cli import app

runner = CliRunner()


def asked(monkeypatch: pytest.MonkeyPatch) -> list[list[str] | None]:
    """The overlay names run_matrix is called with (it is not run)."""
    import vnetbench.runs.matrix

    calls: list[list[str] | None] = []

    def run_matrix(*args: object, overlay_names: list[str] | None = None,
                   **kwargs: object) -> Path:
        calls.append(overlay_names)
        raise SystemExit(0)

    monkeypatch.setattr(vnetbench.runs.matrix, "run_matrix", run_matrix)
    return calls


@pytest.mark.parametrize("options", [
    ["--overlay", "baseline,wireguard"], ["--overlay", "baseline", "--overlay", "wireguard"],
    ["--overlay", " baseline , wireguard "]])
def test_both_forms_name_the_same_overlays(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                           options: list[str]) -> None:
    calls = asked(monkeypatch)
    runner.invoke(app, ["matrix", *options, "--out", str(tmp_path)])
    assert calls == [["baseline", "wireguard"]]


@pytest.mark.parametrize(("options", "said"), [
    (["--overlay", "baseline,nope"], "no overlay called 'nope'"),
    (["--overlay", "baseline", "--overlay", "baseline"], "names an overlay twice"),
    (["--overlay", "wireguard,wireguard"], "names an overlay twice")])
def test_a_wrong_or_repeated_name_is_refused_first(monkeypatch: pytest.MonkeyPatch,
                                                   tmp_path: Path, options: list[str],
                                                   said: str) -> None:
    calls = asked(monkeypatch)
    result = runner.invoke(app, ["matrix", *options, "--out", str(tmp_path)])
    assert result.exit_code == 2 and said in " ".join(result.output.split())
    assert calls == []


def test_no_overlay_given_is_every_overlay(monkeypatch: pytest.MonkeyPatch,
                                           tmp_path: Path) -> None:
    calls = asked(monkeypatch)
    runner.invoke(app, ["matrix", "--out", str(tmp_path)])
    assert calls == [None]
