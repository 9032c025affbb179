"""The room's end as the host reads it: the barrier's line releases the room only when
every machine arrived; anything else leaves the pass to its deadline."""

from __future__ import annotations

import json

from vnetbench.scenarios.room.end import BARRIER_MARK, released_at


def line(arrived: int, released: float) -> str:
    return BARRIER_MARK + json.dumps({"arrived": arrived, "released": released})


def test_every_machine_arrived_releases_the_room_at_the_barriers_instant() -> None:
    assert released_at(f"noise\n{line(30, 1700000000.25)}\n", 30) == 1700000000.25


def test_fewer_machines_no_line_or_a_broken_line_leave_the_deadline() -> None:
    assert released_at(line(29, 1.0), 30) is None  # cannot happen, but never trusted
    assert released_at("", 30) is None  # the exec failed, or the probe was removed
    assert released_at(BARRIER_MARK + "{not json", 30) is None
    assert released_at(BARRIER_MARK + json.dumps({"arrived": 30}), 30) is None
