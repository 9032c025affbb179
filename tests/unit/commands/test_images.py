"""images vnet's inputs, refused before the engine is asked."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.commands.refusals import refused


@pytest.mark.parametrize(("programs", "profile", "expected"), [
    ("{tmp}/none", None, "The programs directory {tmp}/none lacks {tmp}/none/conductor"),
    ("{tmp}/file", None, "The programs directory {tmp}/file lacks"),
    ("{tmp}", None, "The programs directory {tmp} lacks {tmp}/conductor"),
    ("{tmp}", "{tmp}/none.yml", "{tmp}/none.yml"),
    ("{tmp}", "{tmp}/file", "{tmp}/file"),
    ("{tmp}/loop/x", None, "The programs directory {tmp}/loop/x lacks"),  # not RuntimeError
])
def test_images_vnet_refuses_its_programs_and_profile_before_the_engine(
        programs: str, profile: str | None, expected: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "file").write_text("not a profile: [\n")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    args = ["images", "vnet", "--programs", programs]
    args += ["--vnet-profile", profile] if profile else []
    said = refused([a.replace("{tmp}", str(tmp_path)) for a in args], monkeypatch)
    assert expected.replace("{tmp}", str(tmp_path)) in said
