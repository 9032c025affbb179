"""up's inputs, refused before the engine is asked."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.commands.refusals import refused


@pytest.mark.parametrize("out", ["{tmp}/file", "{tmp}/file/x", "/proc/vnetbench-test"])
def test_up_refuses_an_out_it_cannot_write_before_the_engine(
        out: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "file").write_text("")
    out = out.replace("{tmp}", str(tmp_path))
    assert f"--out {out}" in refused(["up", "--out", out], monkeypatch)


DATA = Path(__file__).parent.parent.parent / "data"
