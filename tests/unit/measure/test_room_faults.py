"""Per-event figures of a room under faults, on hand-made records whose answers are
counted by hand: a room of 10 machines, each asking every 100 ms (100 requests a
second, spread 10 ms apart), answered in 5 ms unless a test says otherwise."""

from __future__ import annotations

import json
import math

import pytest

from vnetbench.measure.room import RoomRecordError
from vnetbench.measure.room_faults import (
    EventWindow,
    Request,
    band_ms,
    by_schedule,
    event_figures,
    marks,
    requests_of,
    schedule_figures,
    timeline,
    unsent_during,
)

T0 = 1000.0  # the room's instant (epoch seconds)
MACHINES = [f"m{i + 1}" for i in range(10)]


def room(seconds: float, latency_ms=lambda k, i: 5.0, error=lambda k, i: None
         ) -> list[Request]:
    """Request k (every 100 ms) of machine i, scheduled at k/10 s + i * 10 ms + 5 ms (off
    the 100 ms grid, so no request sits on a window's edge)."""
    made = []
    for k in range(round(seconds * 10)):
        for i, machine in enumerate(MACHINES):
            at = T0 + (k * 100 + i * 10 + 5) / 1000
            failed = error(k, i)
            made.append(Request(machine, at, None if failed else latency_ms(k, i), failed))
    return made


def stalled(k: int, i: int) -> str | None:
    """A stall of 1 s from 10 s: every request of it fails, half timed out."""
    if 100 <= k < 110:
        return "timeout" if i < 5 else "connect"
    return None


def slow_after(k: int, i: int) -> float:
    """300 ms for the 1.5 s after the stall, then 5 ms again."""
    return 300.0 if 110 <= k < 125 else 5.0


STALL = EventWindow("switch-restart", T0 + 10, T0 + 11)


def test_a_stall_of_a_second_fails_its_requests_and_recovers_when_p99_is_back() -> None:
    figures = event_figures(room(30, slow_after, stalled), STALL)
    assert (figures.requests, figures.failed, figures.timed_out) == (100, 50, 50)
    assert (figures.p50_ms, figures.p99_ms) == (None, None)  # none answered during it
    # after: 150 requests at 300 ms, 850 at 5 ms; p99 is the 990th of 1000
    assert figures.after_p50_ms == pytest.approx(5.0)
    assert figures.after_p99_ms == pytest.approx(300.0)
    assert figures.band_ms == pytest.approx(7.0)  # p99 5 ms, plus the 2 ms floor
    # the last window holding a 300 ms request starts at 12.4 s: back from 12.5 s
    assert figures.recovery_ms == pytest.approx(1500.0)
    assert figures.never_answered == ()


def test_a_room_back_at_once_recovers_in_zero() -> None:
    figures = event_figures(room(30, error=stalled), STALL)
    assert figures.recovery_ms == 0.0
    assert figures.after_p99_ms == pytest.approx(5.0)


def test_a_machine_that_never_answers_again_is_named_and_the_room_not_recovered() -> None:
    def m10_dies(k: int, i: int) -> str | None:
        return "connect" if k >= 100 and i == 9 else None

    figures = event_figures(room(30, error=m10_dies), STALL)
    assert figures.never_answered == ("m10",)
    assert (figures.failed, figures.timed_out) == (10, 0)
    # 10 of every window's 100 requests failed: its p99 is infinitely late, whatever
    # the others did
    assert figures.recovery_ms is None
    assert figures.after_p99_ms == pytest.approx(5.0)  # of those answered


def test_a_late_spike_before_the_horizon_puts_recovery_after_it() -> None:
    def spike(k: int, i: int) -> float:
        return 100.0 if k == 150 else 5.0  # 15.0-15.1 s, 4 s after the lift

    figures = event_figures(room(30, spike), STALL)
    # the last window holding the spike starts at 15.0 s: back from 15.1 s
    assert figures.recovery_ms == pytest.approx(4100.0)
    # beyond the horizon (10 s after the lift), a spike changes nothing
    late = event_figures(room(30, lambda k, i: 100.0 if k == 250 else 5.0), STALL)
    assert late.recovery_ms == 0.0


def test_the_band_is_the_pre_fault_rolling_p99_s_spread() -> None:
    def noisy(k: int, i: int) -> float:
        return 20.0 if k == 50 and i < 2 else 5.0  # two of a window's 100: its p99

    requests = by_schedule(room(12, noisy))
    assert band_ms(requests, T0, T0 + 10) == pytest.approx(20.0)
    assert band_ms(requests, T0, T0 + 4) == pytest.approx(7.0)  # before the noise
    assert band_ms(requests, T0, T0 + 0.5) is None  # no whole window
    early = event_figures(room(30), EventWindow("backbone-down", T0 + 0.5, T0 + 1))
    assert early.band_ms is None and early.recovery_ms is None


def test_a_kill_for_good_is_in_effect_to_the_load_s_end() -> None:
    def server_dead(k: int, i: int) -> str | None:
        return "connect" if k >= 200 else None

    figures = event_figures(room(30, error=server_dead),
                            EventWindow("server-kill", T0 + 20, None))
    assert (figures.requests, figures.failed) == (1000, 1000)
    assert (figures.after_p99_ms, figures.recovery_ms) == (None, None)
    assert figures.never_answered == tuple(MACHINES)


def test_each_event_s_band_keeps_clear_of_the_one_before() -> None:
    requests = room(40, error=stalled)
    first = EventWindow("backbone-down", T0 + 10, T0 + 11)
    second = EventWindow("backbone-down-2", T0 + 15, T0 + 16)  # within 10 s of the first
    third = EventWindow("churn", T0 + 27, T0 + 28)
    figures = schedule_figures(requests, [first, second, third])
    assert [f.label for f in figures] == ["backbone-down", "backbone-down-2", "churn"]
    assert figures[1].band_ms is None  # no clean span before it
    assert figures[2].band_ms == pytest.approx(7.0)
    assert figures[0].failed + figures[0].timed_out == 100
    assert figures[1].requests == 100 and figures[1].failed == 0


def test_the_timeline_counts_each_100_ms_by_scheduled_instant() -> None:
    bins = timeline(room(30, slow_after, stalled), T0)
    assert len(bins) == 300
    assert (bins[0].start_s, bins[0].end_s, bins[0].answered, bins[0].failed) == (
        0.0, 0.1, 10, 0)
    assert (bins[100].answered, bins[100].failed, bins[100].p99_ms) == (0, 10, None)
    assert bins[110].p50_ms == pytest.approx(300.0)
    assert bins[125].p99_ms == pytest.approx(5.0)
    assert marks([STALL, EventWindow("server-kill", T0 + 20, None)], T0) == [
        marks([STALL], T0)[0], marks([EventWindow("server-kill", T0 + 20, None)], T0)[0]]
    assert [(m.start_s, m.end_s) for m in marks([STALL], T0)] == [(10.0, 11.0)]


def test_an_event_never_in_effect_has_no_figures() -> None:
    figures = event_figures(room(5), EventWindow("partition", None, None))
    assert (figures.requests, figures.p99_ms, figures.never_answered) == (0, None, ())


def test_a_generator_s_columns_are_read_on_the_host_s_clock() -> None:
    record = {"loop": "open", "planned": 1700000000.5, "began": 1700000000.5,
              "ended": 1700000003.0, "columns": {
                  "scheduled_us": [0, 200000, 400000], "lag_us": [10, 12, None],
                  "waited": [False, False, True], "sent_us": [100, 200300, None],
                  "done_us": [5100, None, None], "error": [None, "read", "timeout"],
                  "bytes": [200, 0, 0], "size_index": [0, 1, 0]}}
    text = "noise\nvnetbench-room " + json.dumps(record) + "\n"
    first, second, third = requests_of("agent3", text)
    assert (first.machine, first.scheduled, first.latency_ms) == (
        "agent3", 1700000000.5, 5.1)
    assert (second.scheduled, second.error, second.answered) == (
        pytest.approx(1700000000.7), "read", False)
    assert third.late_ms == math.inf
    with pytest.raises(RoomRecordError, match="no per-request columns"):
        requests_of("agent3", 'vnetbench-room {"requests": 3, "planned": 1, "began": 1, '
                    '"ended": 2}')


def test_a_request_never_sent_is_the_faults_when_due_once_they_began() -> None:
    made = room(20, error=lambda k, i: "timeout" if k in (5, 102, 170) else None)
    made = [r if r.error is None else Request(r.machine, r.scheduled, None, r.error, False)
            for r in made]
    # due at 0.5 s: before the stall at 10 s, the generator's own shortfall; at 10.2 s
    # (during it) and 17 s (after it: the path, or its connections, not back) the faults'
    assert unsent_during(made, [STALL]) == 20
    assert unsent_during(made, [EventWindow("x", None, None)]) == 0


def test_the_window_after_a_fault_ends_where_the_next_one_begins() -> None:
    # 300 ms from 12 s on, when the next event has begun: not the first one's aftermath
    made = room(20, latency_ms=lambda k, i: 300.0 if k >= 120 else 5.0)
    alone = event_figures(made, STALL)
    assert alone.after_p99_ms == 300.0
    followed = event_figures(made, STALL, next_start=T0 + 12)
    assert followed.after_p99_ms == 5.0


def test_a_request_still_in_flight_when_the_fault_struck_is_not_in_the_band() -> None:
    # requests due in the 0.9 s before the stall at 10 s waited it out: 1.5 s each
    made = room(20, lambda k, i: 1500.0 if 91 <= k < 100 else 5.0)
    assert event_figures(made, STALL).band_ms == pytest.approx(7.0)
    # one that came back before the fault is the room's steady state, however slow
    slow = room(20, lambda k, i: 500.0 if k == 80 else 5.0)
    assert event_figures(slow, STALL).band_ms == pytest.approx(500.0)


def test_the_band_leaves_out_the_load_s_first_two_seconds_when_it_can() -> None:
    warming = room(20, lambda k, i: 300.0 if k < 10 else 5.0)  # its first second slow
    assert event_figures(warming, STALL).band_ms == pytest.approx(7.0)
    early = EventWindow("switch-restart", T0 + 2.5, T0 + 3)  # no whole window after 2 s
    # from the first request: its windows mostly slow (their median + the 2 ms floor)
    assert event_figures(warming, early).band_ms == pytest.approx(302.0)


def test_a_request_that_failed_before_the_fault_leaves_no_band() -> None:
    # two failures due 0.5 s before the stall (2 of a window's 100: its p99 infinite):
    # with a 2 s timeout they may be the stall's (when they failed is not recorded), so
    # the band is read without them
    made = room(20, error=lambda k, i: "read" if k == 95 and i < 2 else None)
    assert event_figures(made, STALL, timeout_s=2).band_ms == pytest.approx(7.0)
    # without a timeout to allow for, it failed in the room's steady state: no band to
    # come back to, so no recovery either (not "back at once")
    figures = event_figures(made, STALL)
    assert (figures.band_ms, figures.recovery_ms) == (None, None)
