"""doctor's inotify and ARP lines: the instances and entries every container shares, enough
for a large room or not (runtime/host_limits.py), read from the kernel's files."""

from __future__ import annotations

from pathlib import Path

import pytest

from vnetbench.deploy.doctor import inotify_check, neighbour_check
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


@pytest.mark.parametrize(("limit", "ok", "said"), [
    ("1024", False, "more than about 448 agents and switches is refused"),
    ("65536", True, "65536 entries, one table for every container"),
])
def test_the_arp_line_says_the_table_and_what_it_allows(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, limit: str, ok: bool,
        said: str) -> None:
    path = tmp_path / "gc_thresh3"
    path.write_text(limit)
    monkeypatch.setattr(host_limits, "NEIGHBOUR_LIMIT", path)
    name, found_ok, detail = neighbour_check()
    assert name == "ARP table" and found_ok is ok and said in detail
