"""The state directory (address-block claims and their lock) is this user's own, and
a lock held too long is one paragraph, not a wait without end."""

import fcntl
import os
from pathlib import Path

import pytest

from vnetbench.engines import allocation
from vnetbench.errors import UserError


def test_a_new_state_directory_is_private(tmp_path: Path) -> None:
    made = allocation.private_state(tmp_path / "state")
    assert made.stat().st_mode & 0o777 == 0o700


def test_one_others_may_write_or_a_link_is_refused(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.raises(UserError, match="mode 777"):
        allocation.private_state(shared)
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "state", target_is_directory=True)
    (tmp_path / "state").mkdir(mode=0o700)
    with pytest.raises(UserError, match="symbolic link"):
        allocation.private_state(link)


def test_a_lock_held_too_long_is_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(allocation, "STATE", tmp_path)
    monkeypatch.setattr(allocation.private_state, "__defaults__", (tmp_path,))
    with (tmp_path / "blocks.lock").open("a") as holder:
        fcntl.flock(holder, fcntl.LOCK_EX)
        with pytest.raises(UserError, match=r"has held .*blocks\.lock for over 0 s"), \
                allocation.state_lock("blocks.lock", timeout_s=0.3):
            pass
    with allocation.state_lock("blocks.lock", timeout_s=0.3):  # free again
        assert os.path.exists(tmp_path / "blocks.lock")
