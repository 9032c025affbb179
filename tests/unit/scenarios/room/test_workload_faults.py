"""A workload's figures under a schedule of faults, from generator records built as
`vnetbench-room open` prints them (read back by requests_of) for a plan compiled
from a real workload: each event's rows per phase it reached, the at-once events a
fault caught with the machines that never had their object, the machines a kill for
good switched off, and the rows and words a pass emits."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from vnetbench.core.schema import EVENT, FAULT, PHASE
from vnetbench.declared.room import DECLARATION
from vnetbench.measure.room_faults import AFTER_S, EventWindow, Request, requests_of
from vnetbench.model.workload import parse_workload
from vnetbench.scenarios.room.workload import (
    by_machine,
    workload_fault_result,
    workload_notes,
)
from vnetbench.scenarios.room.workload_faults import caught_bursts, phase_fault_figures
from vnetbench.scenarios.room.workload_figures import workload_figures
from vnetbench.scenarios.room.workload_schedule import Part, WorkloadPlan, plan_workload

T0 = 1_700_000_000.0  # the room's instant, epoch seconds (the generator's `planned`)
TIMEOUT_S = 2.0
MACHINES = ["agent1", "agent2", "agent3", "agent4"]
# a contest shortened: the statement at 9 s into its phase, a scoreboard poll 5/s a
# machine (20 requests a second in the room, one every 50 ms: even arrivals, machine
# i shifted by i/4 of the 200 ms gap), then an end rush with a second object
WORKLOAD = parse_workload({"name": "short", "timeout_s": 2, "phases": [
    {"name": "statement", "seconds": 20,
     "at_once": [{"name": "statement", "at_s": 9, "size": "2MiB"}],
     "mix": [{"name": "scoreboard", "size": "20KiB", "rate": 5}]},
    {"name": "end-rush", "seconds": 10,
     "at_once": [{"name": "results", "at_s": 5, "size": "4KiB"}],
     "mix": [{"name": "submission", "size": "4KiB", "rate": 5}]}]}, "test")
PLAN = plan_workload(WORKLOAD, MACHINES, "even", 1)
# a switch restarted 8 s to 10 s in: every request due meanwhile timed out; the polls
# due in the 1.5 s after the lift took 300 ms (the overlay's paths coming back)
SWITCH = EventWindow("switch-restart", T0 + 8.0, T0 + 10.0)
# the backbone flapped in the end rush (22 s to 23 s): its requests failed to connect
FLAP = EventWindow("backbone-flap", T0 + 22.0, T0 + 23.0)
SLOW_UNTIL_S = 11.47  # the last slow poll is due at 11.45 s: off the windows' grid


Outcome = tuple[int | None, str | None]  # (microseconds to its end, error)


def latency(machine: str, at_s: float, part: Part) -> Outcome:
    """What each request met: the mechanism above, 5 ms when nothing held it."""
    if part.at_once and part.name == "statement":
        # caught by the restart: agent1 and agent2 timed out, the others had it late
        return ((None, "timeout") if machine in ("agent1", "agent2")
                else (2_500_000 if machine == "agent3" else 1_800_000, None))
    if part.at_once:
        return 900_000, None  # the results: 900 ms, no fault near
    if SWITCH.start is not None and 8.0 <= at_s < 10.0:
        return None, "timeout"
    if 22.0 <= at_s < 23.0:
        return None, "connect"
    return (300_000 if 10.0 <= at_s < SLOW_UNTIL_S else 5_000), None


def records(plan: WorkloadPlan = PLAN,
            outcome: Callable[[str, float, Part], Outcome] = latency
            ) -> dict[str, list[Request]]:
    """Each machine's generator line for its schedule, read back as a pass reads it."""
    found: list[Request] = []
    for machine, schedule in plan.schedules.items():
        due = list(schedule.offsets_us)
        met = [outcome(machine, d / 1e6, p) for d, p in zip(due, plan.parts[machine],
                                                          strict=True)]
        done = [None if took is None else d + took for d, (took, _) in zip(due, met,
                                                                         strict=True)]
        record = {"loop": "open", "planned": T0, "began": T0, "ended": T0 + 40,
                  "columns": {"scheduled_us": due, "sent_us": due, "done_us": done,
                              "error": [e for _, e in met], "lag_us": [0] * len(due),
                              "waited": [False] * len(due), "bytes": [0] * len(due)}}
        found += requests_of(machine, "vnetbench-room " + json.dumps(record))
    return by_machine(found)


def test_each_event_has_rows_for_the_phases_it_reached_over_their_mix_only() -> None:
    rows = {(r.fault, r.phase): r.figures for r in phase_fault_figures(
        PLAN, records(), [SWITCH, FLAP], T0, TIMEOUT_S)}
    # the restart's 10 s after its lift end at 20 s, where the end rush begins: no row
    # there; the flap began after the statement phase's end
    assert set(rows) == {("switch-restart", "statement"), ("backbone-flap", "end-rush")}
    switch = rows["switch-restart", "statement"]
    # 2 s of polls at 20 a second, every one timed out; the statement's 4 requests
    # (due at 9 s, during the restart) are the at-once event's, not the phase's
    assert (switch.requests, switch.failed, switch.timed_out) == (40, 0, 40)
    assert switch.p99_ms is None  # none answered during it
    assert switch.after_p99_ms == 300.0  # the slow polls right after the lift
    flap = rows["backbone-flap", "end-rush"]
    assert (flap.requests, flap.failed, flap.timed_out) == (20, 20, 0)
    assert flap.after_p99_ms == 5.0


def test_a_phase_s_recovery_is_its_own_rolling_p99_back_within_its_band() -> None:
    (switch, _) = phase_fault_figures(PLAN, records(), [SWITCH, FLAP], T0, TIMEOUT_S)
    # the band is the polls' 5 ms (and the clock's floor above it); the first window
    # holding no slow poll begins at 11.5 s, 1.5 s after the lift. Over the whole room
    # the statement's 1.8-2.5 s replies (due at 9 s) would be in it too: not the phase's
    assert switch.figures.band_ms is not None and switch.figures.band_ms < 300
    assert switch.figures.recovery_ms == 1500.0


def test_an_at_once_event_a_fault_caught_says_its_last_machine_and_names_the_rest() -> None:
    figures = workload_figures(PLAN, records())
    statement, results = figures.events
    assert statement.unfinished_machines == ("agent1", "agent2")
    assert results.unfinished_machines == ()
    caught = caught_bursts(PLAN, figures, records(), [SWITCH, FLAP], T0, TIMEOUT_S)
    # the results (25 s, done by 25.9 s) ran after the flap's lift: not caught
    assert [(c.fault, c.burst.event) for c in caught] == [("switch-restart", "statement")]
    (burst,) = caught
    assert (burst.burst.last_ms, burst.burst.unfinished) == (2500.0, 2)


def test_a_fault_that_began_while_the_burst_was_in_flight_caught_it() -> None:
    """The statement is due at 9 s and its last reply ends at 11.5 s: a fault from
    11 s is in it, one from 11.6 s (after every reply) is not."""
    def fast(machine: str, at_s: float, part: Part) -> Outcome:
        return (2_500_000 if part.at_once and part.name == "statement" else 5_000), None

    figures = workload_figures(PLAN, records(outcome=fast))
    events = [EventWindow("loss-burst", T0 + 11.0, T0 + 12.0),
              EventWindow("delay-spike", T0 + 11.6, T0 + 12.0),
              EventWindow("never", None, None)]
    caught = caught_bursts(PLAN, figures, records(outcome=fast), events, T0, TIMEOUT_S)
    assert [(c.fault, c.burst.event) for c in caught] == [("loss-burst", "statement")]


def test_the_rows_are_declared_series_with_fault_and_phase_or_event_columns() -> None:
    figures = workload_figures(PLAN, records())
    metrics, notes = workload_fault_result(PLAN, figures, records(), [SWITCH, FLAP], T0,
                                           TIMEOUT_S)
    assert metrics["room_fault_phase_timeouts_switch-restart_statement"] == (40, "count")
    assert metrics["room_fault_phase_failed_backbone-flap_end-rush"] == (20, "count")
    assert metrics["room_fault_phase_recovery_ms_switch-restart_statement"] == (1500.0, "ms")
    assert metrics["room_fault_burst_last_ms_switch-restart_statement"] == (2500.0, "ms")
    assert metrics["room_fault_burst_unfinished_switch-restart_statement"] == (2, "count")
    assert len(metrics) == 2 * 6 + 2
    for name in metrics:
        assert DECLARATION.metric(name).dimensions in ((FAULT, PHASE), (FAULT, EVENT)), name
    assert notes == ["at-once event statement, caught by switch-restart: the last of the 2 "
                     "machines that had it had it 2500 ms after its instant; 2 of 4 never "
                     "did (agent1, agent2)"]


# the short contest over HTTPS: the restart's reconnect storm is its polls' handshakes
HTTPS_WORKLOAD = parse_workload({"name": "short-https", "timeout_s": 2, "phases": [
    {"name": "statement", "seconds": 20,
     "at_once": [{"name": "statement", "at_s": 9, "size": "2MiB", "scheme": "https"}],
     "mix": [{"name": "scoreboard", "size": "20KiB", "rate": 5, "scheme": "https"}]},
    {"name": "end-rush", "seconds": 10,
     "mix": [{"name": "submission", "upload": "4KiB", "rate": 5, "scheme": "https"}]}]},
    "test")
HTTPS_PLAN = plan_workload(HTTPS_WORKLOAD, MACHINES, "even", 1)


def handshake(at_s: float) -> str | None:
    """The restart closed every connection: the polls due in the 200 ms after its lift
    open new ones with full handshakes (the machines' sessions were not taken), the
    rest of the phase resumes; every other request rides a kept connection."""
    return "full" if 10.0 <= at_s < 10.2 else "resumed" if 10.2 <= at_s < 20.0 else None


def test_a_fault_s_reconnect_storm_counts_its_handshakes_per_phase() -> None:
    """Over HTTPS each event's row per phase counts the handshakes of the phase's
    requests from the fault until AFTER_S after its lift; a plain workload has none."""
    found: list[Request] = []
    for machine, schedule in HTTPS_PLAN.schedules.items():
        due = list(schedule.offsets_us)
        opened = [handshake(d / 1e6) for d in due]
        record = {"loop": "open", "planned": T0, "began": T0, "ended": T0 + 40,
                  "columns": {"scheduled_us": due, "sent_us": due,
                              "done_us": [d + 5_000 for d in due], "error": [None] * len(due),
                              "lag_us": [0] * len(due), "waited": [False] * len(due),
                              "bytes": [0] * len(due), "handshake": opened,
                              "connect_us": [None if h is None else 4_000 if h == "full"
                                             else 2_000 for h in opened]}}
        found += requests_of(machine, "vnetbench-room " + json.dumps(record))
    rows = {(r.fault, r.phase): r.tls for r in phase_fault_figures(
        HTTPS_PLAN, by_machine(found), [SWITCH, FLAP], T0, TIMEOUT_S)}
    # 20 polls a second in the room: 4 in the 200 ms after the lift, 196 in the 9.8 s to
    # the phase's end (its 10 s after the lift reach 20 s); the flap's uploads kept theirs
    assert AFTER_S == 10.0
    switch, flap = rows["switch-restart", "statement"], rows["backbone-flap", "end-rush"]
    assert switch is not None and (switch.full, switch.resumed) == (4, 196)
    assert switch.connect_p99_ms == 4.0
    assert flap is not None and (flap.full, flap.resumed, flap.connect_p99_ms) == (0, 0, None)
    metrics, _ = workload_fault_result(HTTPS_PLAN, workload_figures(HTTPS_PLAN, by_machine(
        found)), by_machine(found), [SWITCH, FLAP], T0, TIMEOUT_S)
    assert metrics["room_fault_phase_tls_full_switch-restart_statement"] == (4, "count")
    assert metrics["room_fault_phase_tls_resumed_switch-restart_statement"] == (196, "count")
    plain = phase_fault_figures(PLAN, records(), [SWITCH, FLAP], T0, TIMEOUT_S)
    assert all(r.tls is None for r in plain)


def test_a_burst_s_machines_that_never_had_it_are_named_three_at_most() -> None:
    def lost(machine: str, at_s: float, part: Part) -> Outcome:
        return ((None, "timeout") if part.at_once and machine != "agent3"
                else (5_000, None))

    figures = workload_figures(PLAN, records(outcome=lost))
    assert workload_notes(figures)[0] == (
        "at-once event statement: 3 of 4 machines never had the object (agent1, agent2, "
        "agent4) (its time is the last of those that did)")
    more = plan_workload(WORKLOAD, [f"agent{n}" for n in range(1, 8)], "even", 1)
    figures = workload_figures(more, records(more, lost))
    assert "(agent1, agent2, agent4 and 3 more)" in workload_notes(figures)[0]


def test_a_machine_killed_for_good_asks_only_what_was_due_before_its_kill() -> None:
    from vnetbench.scenarios.room.workload_schedule import until_killed

    cut = until_killed(PLAN, {"agent2": 12.0})
    schedule = cut.schedules["agent2"]
    assert schedule.offsets_us and max(schedule.offsets_us) < 12_000_000
    assert len(cut.parts["agent2"]) == len(schedule)
    assert cut.schedules["agent1"] == PLAN.schedules["agent1"]
    # its generator's record is its cut schedule's: matched by position, none left out
    figures = workload_figures(cut, records(cut))
    assert figures.unattributed == {}
    (statement, results) = figures.events
    assert (statement.machines, results.machines) == (4, 3)  # off by the results
    whole = workload_figures(PLAN, records(cut))
    assert "agent2" in whole.unattributed  # the uncut plan could not read it


@pytest.mark.parametrize("lift_s", [10.0, None])
def test_a_phase_is_reached_through_the_after_window_of_the_lift(lift_s: float | None) -> None:
    """A fault lifted at 12 s reaches the end rush (from 20 s) through its AFTER_S; one
    never lifted reaches every phase from its start on."""
    end = None if lift_s is None else T0 + lift_s + 2.0
    event = EventWindow("server-restart", T0 + 8.0, end)
    phases = [r.phase for r in phase_fault_figures(PLAN, records(), [event], T0, TIMEOUT_S)]
    assert 12.0 + AFTER_S > 20.0
    assert phases == ["statement", "end-rush"]


def test_a_pass_adds_the_rows_and_judges_the_band_on_the_workload_s_timeout() -> None:
    """The glue run_pass runs once the records are read, given the timeout the load ran
    with (run_pass: timeout_of, the workload's own when it has one; here 5 s, as a
    workload's timeout_s would give it). A poll due at 5 s that timed out after 5 s
    ended at 10 s, in the restart (from 8 s): it
    is the fault's, not the room's state before it. Judged on room_timeout_s (2 s), as
    the pass once was, it failed before the fault: a band with a failure is none, and
    so is the recovery."""
    from types import SimpleNamespace

    from vnetbench.faults.on_stack import ScheduleOutcome
    from vnetbench.scenarios.base import PassResult
    from vnetbench.scenarios.resources import MemoryFigures
    from vnetbench.scenarios.room.runtime import Load, with_workload_and_faults

    def one_lost(machine: str, at_s: float, part: Part) -> Outcome:
        if machine == "agent1" and abs(at_s - 5.0) < 1e-6 and not part.at_once:
            return None, "timeout"
        return latency(machine, at_s, part)

    requests = [r for found in records(outcome=one_lost).values() for r in found]
    assert any(r.error == "timeout" and abs(r.scheduled - T0 - 5.0) < 1e-6
               for r in requests)

    def pass_metrics(timeout_s: float) -> dict[str, tuple[float | None, str]]:
        load = Load({}, {}, {}, MemoryFigures({}, {}), None, None, T0, 1.0, 1.0,
                    ScheduleOutcome({}, [SWITCH, FLAP], {"switch-restart": 2000.0,
                                                         "backbone-flap": 1000.0}),
                    requests)
        result = PassResult({}, {})
        faulted = SimpleNamespace(killed=set())
        with_workload_and_faults(result, load, PLAN, faulted,  # type: ignore[arg-type]
                                 timeout_s, dict)
        assert any(n.startswith("at-once event statement, caught by switch-restart")
                   for n in result.notes)
        return result.metrics

    metrics = pass_metrics(5.0)
    assert metrics["room_phase_timeouts_statement"][0] == 41  # the restart's and the lost
    assert metrics["room_fault_band_ms_switch-restart"][0] is not None
    assert metrics["room_fault_phase_recovery_ms_switch-restart_statement"] == (1500.0, "ms")
    assert metrics["room_fault_burst_unfinished_switch-restart_statement"] == (2, "count")
    judged_on_2s = pass_metrics(2.0)
    assert judged_on_2s["room_fault_phase_recovery_ms_switch-restart_statement"][0] is None
