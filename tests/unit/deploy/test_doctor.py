"""doctor's inotify line: the instances every container shares, enough for a large
WireGuard room or not (runtime/host_limits.py), read from the kernel's file."""

from __future__ import annotations

from pathlib import Path

import pytest

from vnetbench.deploy.doctor import inotify_check
from vnetbench.runtime import host_limits


@pytest.mark.parametrize(("limit", "ok", "said"), [
    ("8192\n", True, "8192 per user, shared by every container"),
    ("128\n", False, "more than about 112 agents and switches is refused"),
    ("garbage", True, "unknown"),
])
def test_the_inotify_line_says_the_limit_and_what_it_allows(
        limit: str, ok: bool, said: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "max_user_instances"
    path.write_text(limit)
    monkeypatch.setattr(host_limits, "INOTIFY_LIMIT", path)
    name, found_ok, detail = inotify_check()
    assert name == "inotify instances" and found_ok is ok and said in detail
