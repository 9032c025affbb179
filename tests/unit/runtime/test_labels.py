"""Who owns a run: every owner label its objects carry, so one helper's ended process
cannot make a run left up on purpose look orphaned."""

from vnetbench.runtime.labels import all_gone, current_owner, detached_owner

GONE = "elsewhere-never:1:1"  # another host: never judged gone
DEAD = f"{current_owner().split(':')[0]}:999999999:1"  # this host, no such process


def test_a_run_is_orphaned_only_when_every_owner_is_gone() -> None:
    assert all_gone({DEAD})
    assert all_gone({None}) and all_gone(set())  # no owner label at all
    assert not all_gone({DEAD, detached_owner("vnetbench up")})  # shaped by up, then left
    assert not all_gone({DEAD, current_owner()})  # a live process still has it
    assert not all_gone({GONE})
