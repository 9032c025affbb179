"""A workload compiled into the open loop's schedules: phases end to end, each kind
spread as the room's arrivals spread requests, at-once events at one microsecond on
every machine, and the plan refused before anything starts when it cannot run."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from vnetbench.errors import UserError
from vnetbench.model.workload import Workload, workload_from
from vnetbench.scenarios.room.open_loop import MAX_ARGUMENT_BYTES, decode, encode
from vnetbench.scenarios.room.workload_schedule import (
    Part,
    check_plan,
    connection_of,
    plan_problems,
    plan_workload,
)

MACHINES = [f"agent{n}" for n in range(1, 21)]


def workload(*phases: dict[str, Any]) -> Workload:
    return Workload.model_validate({"phases": list(phases)})


TWO = workload(
    {"name": "start", "seconds": 10, "at_once": [{"name": "doc", "at_s": 2, "size": "2MiB"}],
     "mix": [{"name": "poll", "size": 200, "rate": 1}]},
    {"name": "rush", "seconds": 5, "mix": [{"name": "poll", "size": 200, "rate": 2},
                                           {"name": "submit", "size": 4096, "rate": 0.5}]})


def test_phases_lie_end_to_end_and_each_request_knows_its_part() -> None:
    plan = plan_workload(TWO, MACHINES, "even", pass_no=1)
    assert [(p.name, p.start_us, p.end_us) for p in plan.phases] == [
        ("start", 0, 10_000_000), ("rush", 10_000_000, 15_000_000)]
    assert plan.sizes == (200, 4096, 2 * 2**20)
    for machine in MACHINES:
        schedule, parts = plan.schedules[machine], plan.parts[machine]
        assert len(parts) == len(schedule)
        assert list(schedule.offsets_us) == sorted(schedule.offsets_us)
        for offset, size, part in zip(schedule.offsets_us, schedule.size_indexes, parts,
                                      strict=True):
            span = next(p for p in plan.phases if p.name == part.phase)
            assert span.start_us <= offset < span.end_us
            assert plan.sizes[size] == {"doc": 2 * 2**20, "poll": 200, "submit": 4096}[part.name]
    counts = Counter(plan.parts["agent1"])
    assert counts[Part("start", "poll")] == 10
    assert counts[Part("rush", "poll")] == 10
    assert counts[Part("rush", "submit")] in (2, 3)
    assert counts[Part("start", "doc", at_once=True)] == 1


def test_an_at_once_event_is_one_request_of_every_machine_at_the_same_microsecond() -> None:
    plan = plan_workload(TWO, MACHINES, "poisson", pass_no=3)
    assert [(e.name, e.phase, e.at_us, e.size) for e in plan.events] == [
        ("doc", "start", 2_000_000, 2 * 2**20)]
    for machine in MACHINES:
        at = [offset for offset, part in zip(plan.schedules[machine].offsets_us,
                                             plan.parts[machine], strict=True) if part.at_once]
        assert at == [2_000_000]


def test_even_arrivals_shift_each_machine_by_its_share_of_the_kind_s_gap() -> None:
    plan = plan_workload(TWO, MACHINES, "even", pass_no=1)
    firsts = [next(o for o, p in zip(plan.schedules[m].offsets_us, plan.parts[m], strict=True)
                   if p == Part("start", "poll")) for m in MACHINES]
    assert firsts == [n * 50_000 for n in range(20)]  # 1 s gap over 20 machines


def test_a_kind_slower_than_a_request_a_phase_asks_the_room_its_rate_not_one_each() -> None:
    """0.01/s for 60 s over 20 machines: 12 requests in the room, not 20 (open_loop.py
    alone gives every machine one, some of them after the phase's end)."""
    slow = workload({"name": "steady", "seconds": 60,
                     "mix": [{"name": "submit", "size": 4096, "rate": 0.01}]},
                    {"name": "next", "seconds": 10, "at_once": [{"name": "x", "size": 1}]})
    for arrivals in ("even", "poisson"):
        plan = plan_workload(slow, MACHINES, arrivals, pass_no=1)  # type: ignore[arg-type]
        asked = [m for m in MACHINES if Part("steady", "submit") in plan.parts[m]]
        assert len(asked) == 12, arrivals
        assert all(o < 60_000_000 for m in MACHINES for o, p in
                   zip(plan.schedules[m].offsets_us, plan.parts[m], strict=True)
                   if p.phase == "steady")


def test_poisson_plans_as_many_as_even_reproducibly_per_pass() -> None:
    even = plan_workload(TWO, MACHINES, "even", pass_no=1)
    drawn = plan_workload(TWO, MACHINES, "poisson", pass_no=1)
    assert all(Counter(even.parts[m]) == Counter(drawn.parts[m]) for m in MACHINES)
    assert drawn == plan_workload(TWO, MACHINES, "poisson", pass_no=1)
    assert drawn.schedules != plan_workload(TWO, MACHINES, "poisson", pass_no=2).schedules


def test_every_schedule_encodes_into_one_argument_and_back() -> None:
    plan = plan_workload(workload_from("contest"), MACHINES, "poisson", pass_no=1)
    for schedule in plan.schedules.values():
        assert decode(encode(schedule)) == schedule
    assert plan.last_s < workload_from("contest").seconds


def test_a_workload_too_long_for_one_argument_is_refused_before_anything_starts() -> None:
    long = workload({"name": "flood", "seconds": 3600,
                     "mix": [{"name": "poll", "size": 200, "rate": 10}]})
    said = plan_problems(long, "keep")
    assert len(said) == 1 and "36000 requests" in said[0]
    assert f"{MAX_ARGUMENT_BYTES + 1:,} bytes" in said[0]
    assert plan_problems(TWO, "keep") == []


def test_kinds_asking_for_both_connection_modes_are_refused_with_every_problem() -> None:
    mixed = workload({"name": "flood", "seconds": 3600,
                      "mix": [{"name": "poll", "size": 200, "rate": 10, "connection": "keep"},
                              {"name": "submit", "size": 4096, "rate": 0.1}]})
    assert connection_of(mixed, "keep") == "keep"
    assert connection_of(mixed, "new") is None
    with pytest.raises(UserError) as caught:
        check_plan(mixed, "new", "contest.yml")
    said = str(caught.value)
    assert said.startswith("contest.yml cannot run as the room's open loop:")
    assert "  - the workload could hand a machine" in said
    assert "flood.poll: keep, flood.submit: new" in said
    check_plan(TWO, "new")  # nothing asked: the room's setting throughout
