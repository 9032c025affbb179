"""cpu_seconds: a container's CPU counter from its cgroup (v1 or v2), None when unreadable."""

from __future__ import annotations

from pathlib import Path

import pytest

from vnetbench.engines import usage


def test_v1_and_v2_counters_are_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(usage, "CGROUP", tmp_path)
    v1 = tmp_path / "cpuacct" / "docker" / "c1"
    v1.mkdir(parents=True)
    (v1 / "cpuacct.usage").write_text("2500000000\n")
    v2 = tmp_path / "system.slice" / "docker-c2.scope"
    v2.mkdir(parents=True)
    (v2 / "cpu.stat").write_text("usage_usec 1500000\nuser_usec 1000000\n")
    assert usage.cpu_seconds("c1") == 2.5
    assert usage.cpu_seconds("c2") == 1.5
    assert usage.cpu_seconds("c3") is None


def test_a_counter_gone_while_read_is_none(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A container that ended after it was listed: its cgroup file exists, then reading
    it fails (the kernel said ENODEV mid-pass); a directory in its place fails alike."""
    monkeypatch.setattr(usage, "CGROUP", tmp_path)
    (tmp_path / "cpuacct" / "docker" / "c1" / "cpuacct.usage").mkdir(parents=True)
    assert usage.cpu_seconds("c1") is None
