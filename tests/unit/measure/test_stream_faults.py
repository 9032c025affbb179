"""The stream under faults, from iperf3's intervals on the host's clock: its rate
before, during and after each event, the time it stalled, when it was back."""

from __future__ import annotations

import json

import pytest

from vnetbench.measure.room_faults import EventWindow
from vnetbench.measure.stream_faults import (
    Interval,
    event_figures,
    intervals_of,
    schedule_figures,
)

T0 = 1000.0


def stream(seconds: float, mbit=lambda t: 100.0) -> list[Interval]:
    """100 ms intervals from T0, each at mbit(its start after T0)."""
    return [Interval(T0 + k / 10, T0 + (k + 1) / 10, mbit(k / 10))
            for k in range(round(seconds * 10))]


def outage(t: float) -> float:
    """Nothing from 10 s to 13 s, 40 Mbit/s for 1 s after, then 100 again."""
    return 0.0 if 10 <= t < 13 else 40.0 if 13 <= t < 14 else 100.0


DOWN = EventWindow("backbone-down", T0 + 10, T0 + 13)


def test_an_outage_stalls_the_stream_and_its_recovery_is_when_the_rate_stays_back() -> None:
    figures = event_figures(stream(30, outage), DOWN)
    assert figures.before_mbit == pytest.approx(100.0)
    assert figures.during_mbit == pytest.approx(0.0)
    assert figures.stalled_ms == pytest.approx(3000.0)  # under 10 Mbit/s: the outage
    assert figures.recovery_ms == pytest.approx(1000.0)  # 40 Mbit/s is not back
    assert figures.after_mbit == pytest.approx((40 + 9 * 100) / 10)


def test_a_stream_that_never_comes_back_has_no_recovery() -> None:
    figures = event_figures(stream(30, lambda t: 0.0 if t >= 10 else 100.0), DOWN)
    assert figures.recovery_ms is None and figures.stalled_ms == pytest.approx(13000.0)


def test_the_rate_before_leaves_out_slow_start_and_the_previous_event() -> None:
    ramp = stream(30, lambda t: 10.0 if t < 1 else 0.0 if 20 <= t < 21 else 100.0)
    assert event_figures(ramp, DOWN).before_mbit == pytest.approx(100.0)
    # the second event's "before" is not the first's aftermath (10 s after its end)
    first, second = schedule_figures(ramp, [EventWindow("a", T0 + 5, T0 + 6),
                                            EventWindow("b", T0 + 20, T0 + 21)])
    assert second.before_mbit == pytest.approx(100.0)
    assert first.after_mbit == pytest.approx(100.0)  # up to the next event


def test_iperf3_intervals_are_placed_on_the_host_s_clock() -> None:
    report = json.dumps({"intervals": [
        {"sum": {"start": 0, "end": 0.1002, "bits_per_second": 9.4e8}},
        {"sum": {"start": 0.1002, "end": 0.2001, "bits_per_second": 0.0}}]})
    first, second = intervals_of("vnetbench-at began=1 late_s=0\n" + report, T0)
    assert (first.start, first.end, first.mbit) == (T0, pytest.approx(T0 + 0.1002), 940.0)
    assert second.mbit == 0.0
    assert intervals_of("iperf3: error - unable to connect", T0) == []
