"""What every unit test holds fixed about the machine it runs on."""

from pathlib import Path

import pytest

from vnetbench.runtime import host_limits


@pytest.fixture(scope="session")
def raised_inotify_limit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("host") / "max_user_instances"
    path.write_text(f"{host_limits.RAISED_INOTIFY}\n")
    return path


@pytest.fixture(scope="session")
def raised_neighbour_limit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("host") / "gc_thresh3"
    path.write_text(f"{host_limits.RAISED_NEIGHBOURS}\n")
    return path


@pytest.fixture(autouse=True)
def limits_as_make_setup_leaves_them(monkeypatch: pytest.MonkeyPatch,
                                    raised_inotify_limit: Path,
                                    raised_neighbour_limit: Path) -> None:
    """The host's inotify limit read by the checks before a stack starts (a 300-machine
    WireGuard venue needs 306) is `make setup`'s 8192 with none in use, not the
    machine's: a fresh one has Debian's 128, and the unit tests run before the set-up
    raises it (`make test` runs them beside it). tests/unit/runtime/test_host_limits.py
    sets its own."""
    monkeypatch.setattr(host_limits, "INOTIFY_LIMIT", raised_inotify_limit)
    monkeypatch.setattr(host_limits, "inotify_in_use", lambda: 0)
    # likewise the ARP table's size (Debian's 1024 holds about 450 containers)
    monkeypatch.setattr(host_limits, "NEIGHBOUR_LIMIT", raised_neighbour_limit)
