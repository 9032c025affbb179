"""The room's rows under a schedule of faults: a `fault` column per event as failover
reports its faults, the timeline as rows with interval_s, the events marked on it,
and the words naming machines that never got an answer again."""

from __future__ import annotations

from vnetbench.declared.room import DECLARATION
from vnetbench.measure.room_faults import EventWindow, Request
from vnetbench.scenarios.room.faults import room_fault_result

T0 = 1000.0


def requests() -> list[Request]:
    """Two machines asking every 100 ms for 20 s; from 5 s to 6 s every request times
    out; agent2 never answers again after it."""
    made = []
    for k in range(200):
        for i, machine in enumerate(("agent1", "agent2")):
            at = T0 + k / 10 + i * 0.05 + 0.01
            dead = 50 <= k < 60 or (i == 1 and k >= 50)
            made.append(Request(machine, at, None if dead else 4.0,
                                "timeout" if dead else None))
    return made


def test_each_event_s_figures_are_rows_with_its_label_as_the_fault() -> None:
    metrics, series, words = room_fault_result(
        requests(), [EventWindow("switch-restart", T0 + 5, T0 + 6)], T0)
    assert metrics["room_fault_timeouts_switch-restart"] == (20, "count")
    assert metrics["room_fault_failed_switch-restart"] == (0, "count")
    assert metrics["room_fault_never_answered_switch-restart"] == (1, "count")
    assert metrics["room_fault_at_s_switch-restart"] == (5.0, "s")
    assert metrics["room_fault_end_s_switch-restart"] == (6.0, "s")
    assert metrics["room_fault_recovery_ms_switch-restart"] == (None, "ms")
    assert DECLARATION.metric("room_fault_p99_ms_switch-restart").values_in(
        "room_fault_p99_ms_switch-restart") == {"fault": "switch-restart"}
    assert words == [
        "switch-restart: 1 machine(s) never got an answer again after it (agent2)",
        "switch-restart: its p50 and p99 are of the requests answered; 20 of its 20 got no "
        "answer (0 failed, 20 timed out)",
        "switch-restart: the room's p99 was not back within its band (up to 6.0 ms before "
        "the fault) within 10 s after the lift, or before the next event or the load's end"]
    answered = [p for p in series if p.metric == "room_timeline_answered"]
    assert len(answered) == 200 and answered[0].interval_s == 0.1
    assert [p.value for p in answered[49:51]] == [2.0, 0.0]
    failed = {p.interval_s: p.value for p in series if p.metric == "room_timeline_failed"}
    assert failed[5.1] == 2.0 and failed[0.1] == 0.0
    # no latency row where nothing was answered
    assert 5.1 not in {p.interval_s for p in series if p.metric == "room_timeline_p99_ms"}


def test_a_kill_for_good_has_no_end_mark_and_no_recovery() -> None:
    metrics, _, _ = room_fault_result(requests(), [EventWindow("server-kill", T0 + 5, None)],
                                      T0)
    assert "room_fault_end_s_server-kill" not in metrics
    assert metrics["room_fault_after_p99_ms_server-kill"] == (None, "ms")
