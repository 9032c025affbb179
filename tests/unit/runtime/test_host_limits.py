"""This machine's shared inotify instances and ARP table, checked before a stack starts: a
300-machine WireGuard room (one wireguard-go each) lost 178 machines to Debian's 128
inotify instances (2026-12-06), a 1000-machine room a third of its requests to the
1024-entry ARP table (2026-12-07)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vnetbench.errors import EnvironmentProblem
from vnetbench.model.topology import parse_topology
from vnetbench.overlays.baseline import Baseline
from vnetbench.overlays.wireguard import WireGuard
from vnetbench.runtime import host_limits
from vnetbench.runtime.host_limits import (
    INOTIFY_HEADROOM,
    inotify_in_use,
    neighbours_needed,
    require_inotify,
    require_neighbours,
)
from vnetbench.scenarios import get_scenario


@pytest.fixture
def limit(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A max_user_instances file of 128 and no instance in use."""
    path = tmp_path / "max_user_instances"
    path.write_text("128\n")
    monkeypatch.setattr(host_limits, "INOTIFY_LIMIT", path)
    monkeypatch.setattr(host_limits, "inotify_in_use", lambda: 0)
    return path


def test_what_fits_under_the_limit_beside_the_headroom_passes(limit: Path) -> None:
    require_inotify(128 - INOTIFY_HEADROOM, "them")


def test_what_does_not_fit_is_an_environment_problem_naming_the_fix(limit: Path) -> None:
    with pytest.raises(EnvironmentProblem) as refused:
        require_inotify(305, "wireguard's 305 agents and switches")
    assert refused.value.exit_code == 3
    text = str(refused.value)
    assert "allows 128 inotify instances" in text and "need 305 more" in text
    assert "sysctl -w fs.inotify.max_user_instances=8192" in text
    assert f"about {128 - INOTIFY_HEADROOM} fit" in text


def test_a_limit_that_cannot_be_read_is_not_checked(limit: Path) -> None:
    limit.write_text("not a number")
    require_inotify(10_000, "them")
    limit.unlink()
    require_inotify(10_000, "them")


def test_instances_in_use_count_against_it(limit: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(host_limits, "inotify_in_use", lambda: 100)
    with pytest.raises(EnvironmentProblem):
        require_inotify(20, "them")


def test_the_instances_in_use_are_read_from_each_process_descriptors(tmp_path: Path) -> None:
    for pid, targets in {"1": ["anon_inode:inotify", "pipe:[3]"],
                         "42": ["anon_inode:inotify", "anon_inode:inotify"]}.items():
        (tmp_path / pid / "fd").mkdir(parents=True)
        for index, target in enumerate(targets):
            (tmp_path / pid / "fd" / str(index)).symlink_to(target)
    (tmp_path / "self").mkdir()  # not a process number: skipped
    (tmp_path / "7").mkdir()  # a process gone meanwhile: no fd directory
    assert inotify_in_use(tmp_path) == 3


def test_a_wireguard_room_too_big_for_the_limit_is_refused_before_it_starts(
        limit: Path) -> None:
    room = get_scenario("room")
    big = parse_topology({"name": "t", "overlay": "wireguard", "switches": 2, "agents": 2,
                          "settings": {"machines": 300}}, "t.yml")
    with pytest.raises(EnvironmentProblem):
        room.check(big)
    room.check(big.model_copy(update={"settings": big.settings.model_copy(
        update={"machines": 100})}))  # 100 machines and 2 switches fit
    # the baseline runs no daemon that takes one: never refused
    assert Baseline.inotify_per_node == 0 and WireGuard.inotify_per_node == 1
    room.check(parse_topology({"name": "t", "switches": 2, "agents": 2,
                               "settings": {"machines": 300}}, "t.yml"))


def test_a_topology_brought_up_as_it_is_is_refused_by_prepare(limit: Path) -> None:
    """`vnetbench up`, the pytest plugin and calibrate come through prepare, not through
    a scenario's check: 150 WireGuard agents and 2 switches do not fit under 128."""
    from types import SimpleNamespace

    from vnetbench.deploy.lifecycle import prepare
    from vnetbench.runtime.images import ImageSet

    engine = SimpleNamespace(adjust=lambda topology: topology)
    big = parse_topology({"name": "t", "overlay": "wireguard", "switches": 2,
                          "agents": 150}, "t.yml")
    images = ImageSet()
    with pytest.raises(EnvironmentProblem):
        prepare(big, WireGuard(), engine, images=images)  # type: ignore[arg-type]
    small = big.model_copy(update={"agents": big.agents[:50]})
    assert prepare(small, WireGuard(), engine,  # type: ignore[arg-type]
                   images=images).topology.agents == small.agents


@pytest.fixture
def neighbours(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A gc_thresh3 file of Debian's 1024."""
    path = tmp_path / "gc_thresh3"
    path.write_text("1024\n")
    monkeypatch.setattr(host_limits, "NEIGHBOUR_LIMIT", path)
    return path


def test_the_arp_entries_a_stack_needs_are_two_a_container_and_the_backbone_s() -> None:
    # each machine holds its gateway, each switch its machines; five switches each other
    assert neighbours_needed(1006, 5) == 2 * 1006 + 25


def test_a_room_past_the_arp_table_is_refused_naming_the_sysctl(neighbours: Path) -> None:
    """1000 machines lost a third of their requests to the table's overflow (2026-12-07);
    300 ran whole under the same limit."""
    room = get_scenario("room")
    venue = {"name": "t", "switches": 5, "agents": 5}
    with pytest.raises(EnvironmentProblem) as refused:
        room.check(parse_topology({**venue, "settings": {"machines": 1000}}, "t.yml"))
    text = str(refused.value)
    assert refused.value.exit_code == 3 and "holds 1024 entries" in text
    assert f"gc_thresh3={host_limits.RAISED_NEIGHBOURS}" in text
    room.check(parse_topology({**venue, "settings": {"machines": 300}}, "t.yml"))
    neighbours.write_text(f"{host_limits.RAISED_NEIGHBOURS}\n")
    room.check(parse_topology({**venue, "settings": {"machines": 1000}}, "t.yml"))


def test_an_arp_limit_that_cannot_be_read_is_not_checked(neighbours: Path) -> None:
    neighbours.unlink()  # not the host's namespace: no such file
    require_neighbours(1_000_000, "them")
