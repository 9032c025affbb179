"""Figures per phase and per at-once event from hand-made per-request records: each
record matched to its plan by position, latency from the scheduled instant, an
event's time to its last machine, and machines whose records cannot be matched."""

from __future__ import annotations

import pytest

from vnetbench.measure.room_faults import Request
from vnetbench.model.workload import Workload
from vnetbench.scenarios.room.open_loop import MachineSchedule
from vnetbench.scenarios.room.workload_figures import workload_figures
from vnetbench.scenarios.room.workload_schedule import (
    EventInstant,
    Part,
    PhaseSpan,
    WorkloadPlan,
    plan_workload,
)

DOC = Part("start", "doc", at_once=True)
POLL = Part("start", "poll")
SUBMIT = Part("rush", "submit")
T0 = 1_700_000_000.0  # the room's instant


def plan_of(parts: dict[str, tuple[tuple[int, Part], ...]]) -> WorkloadPlan:
    """A plan by hand: per machine its (offset us, part) in order."""
    size = {DOC: 2, POLL: 0, SUBMIT: 1}
    return WorkloadPlan(
        (200, 4096, 2 * 2**20),
        {m: MachineSchedule(tuple(o for o, _ in ps), tuple(size[p] for _, p in ps))
         for m, ps in parts.items()},
        {m: tuple(p for _, p in ps) for m, ps in parts.items()},
        (PhaseSpan("start", 0, 10_000_000), PhaseSpan("rush", 10_000_000, 15_000_000)),
        (EventInstant("doc", "start", 0, 2 * 2**20),))


# the event and a poll share the instant 0 on agent1: told apart by position
PLAN = plan_of({
    "agent1": ((0, DOC), (0, POLL), (5_000_000, POLL), (12_000_000, SUBMIT)),
    "agent2": ((0, DOC), (500_000, POLL), (5_500_000, POLL), (13_000_000, SUBMIT)),
    "agent3": ((0, DOC), (1_000_000, POLL), (6_000_000, POLL)),
})


def ok(machine: str, offset_us: int, latency_ms: float) -> Request:
    return Request(machine, T0 + offset_us / 1e6, latency_ms)


def failed(machine: str, offset_us: int, error: str, sent: bool = True) -> Request:
    return Request(machine, T0 + offset_us / 1e6, None, error, sent)


RECORDS = {
    "agent1": [ok("agent1", 0, 900.0), ok("agent1", 0, 40.0), ok("agent1", 5_000_000, 3.0),
               ok("agent1", 12_000_000, 7.0)],
    "agent2": [ok("agent2", 0, 1500.0), ok("agent2", 500_000, 20.0),
               failed("agent2", 5_500_000, "timeout", sent=False),
               failed("agent2", 13_000_000, "connect")],
    # agent3 left no record
}


def test_a_phase_s_figures_are_its_mix_s_requests_from_their_scheduled_instants() -> None:
    figures = workload_figures(PLAN, RECORDS)
    start, rush = figures.phases
    assert (start.phase, start.planned, start.answered, start.failed, start.timed_out,
            start.unrecorded) == ("start", 6, 3, 1, 1, 2)
    # the statement's 900 and 1500 ms are the event's, not the phase's
    assert (start.p50_ms, start.p99_ms, start.max_ms) == (20.0, 40.0, 40.0)
    assert (rush.planned, rush.answered, rush.failed, rush.timed_out, rush.unrecorded) == (
        2, 1, 1, 0, 0)
    assert (rush.p50_ms, rush.max_ms) == (7.0, 7.0)
    assert figures.unattributed == {}


def test_an_event_s_time_is_until_its_last_machine_had_the_object() -> None:
    (doc,) = workload_figures(PLAN, RECORDS).events
    assert (doc.event, doc.phase, doc.machines, doc.done) == ("doc", "start", 3, 2)
    assert doc.last_ms == 1500.0
    assert doc.p50_ms == 900.0
    assert doc.unfinished == 1  # agent3: no record


def test_an_event_no_machine_finished_has_no_time_and_every_machine_unfinished() -> None:
    records = {m: [failed(m, 0, "timeout") if p == DOC else ok(m, 0, 1.0)
                   for p in PLAN.parts[m]] for m in PLAN.parts}
    (doc,) = workload_figures(PLAN, records).events
    assert (doc.done, doc.last_ms, doc.p50_ms, doc.unfinished) == (0, None, None, 3)


def test_a_machine_whose_records_do_not_match_its_plan_is_named_not_guessed() -> None:
    records = {**RECORDS, "agent3": [ok("agent3", 0, 5.0)],
               "agent9": [ok("agent9", 0, 1.0)]}
    figures = workload_figures(PLAN, records)
    assert figures.unattributed == {
        "agent3": "1 records for 3 planned requests: not matched to the plan",
        "agent9": "not a machine of the plan"}
    assert figures.phases[0].unrecorded == 2
    assert figures.events[0].unfinished == 1


def test_p99_is_nearest_rank_over_every_machine_s_requests_together() -> None:
    workload = Workload.model_validate({"phases": [
        {"name": "steady", "seconds": 10, "mix": [{"name": "poll", "size": 200, "rate": 5}]}]})
    machines = ["agent1", "agent2"]
    plan = plan_workload(workload, machines, "even", pass_no=1)
    latency = iter(range(1, 101))  # 100 requests in all: 1..100 ms
    records = {m: [ok(m, o, float(next(latency))) for o in plan.schedules[m].offsets_us]
               for m in machines}
    (steady,) = workload_figures(plan, records).phases
    assert steady.planned == steady.answered == 100
    assert (steady.p50_ms, steady.p99_ms, steady.max_ms) == (50.0, 99.0, 100.0)


@pytest.mark.parametrize("error", ["connect", "read", "write", "status", "timeout"])
def test_every_error_kind_counts_as_failed(error: str) -> None:
    records = {**RECORDS, "agent1": [*RECORDS["agent1"][:3], failed("agent1", 12_000_000,
                                                                    error)]}
    rush = workload_figures(PLAN, records).phases[1]
    assert (rush.answered, rush.failed) == (0, 2)
    assert rush.timed_out == (1 if error == "timeout" else 0)
