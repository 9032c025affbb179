"""down's inputs, refused before the engine is asked."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.commands.refusals import refused


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
