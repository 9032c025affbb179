"""A fault's effective window from its edges' stamps, and the overlay's recovery after
the lift, on synthetic probe timelines (no engine)."""

from __future__ import annotations

import pytest

from vnetbench.faults.window import (
    LATE_BOUND_S,
    WOKEN_LATE_BOUND_S,
    EdgeStamps,
    FaultWindow,
    Stamp,
    answered_after,
    recovery_ms,
)
from vnetbench.measure.outage import ProbeTrace, Reply

T0 = 1796127230.0


def edge(name: str, applied: float, lifted: float, late_s: float = 0.001) -> EdgeStamps:
    return EdgeStamps(name, Stamp(T0 + late_s, late_s, T0 + applied),
                      Stamp(T0 + 3 + late_s, late_s, T0 + 3 + lifted))


def probes_answered(*spans: tuple[float, float], interval: float = 0.01) -> ProbeTrace:
    """Probes every `interval` from T0 - 1 s to T0 + 5 s, answered inside the spans
    (seconds after T0) and lost elsewhere."""
    replies, seq = [], 0
    at = T0 - 1
    while at < T0 + 5:
        seq += 1
        if any(a <= at - T0 < b for a, b in spans):
            replies.append(Reply(seq, at, 0.05))
        at += interval
    return ProbeTrace(replies, seq, at)


def test_the_fault_is_in_effect_from_the_latest_edge_applied_to_the_latest_lifted() -> None:
    window = FaultWindow((edge("router-switch1-fault", 0.008, 0.011),
                          edge("router-switch2-fault", 0.015, 0.009),
                          edge("hub-switch1-fault", 0.004, 0.020)), 3000.0)
    assert window.start == pytest.approx(T0 + 0.015)
    assert window.end == pytest.approx(T0 + 3.020)
    assert window.measured_ms == pytest.approx(3005.0, abs=0.01)
    # first edge's step began (T0 + 1 ms) to the last edge's iptables returned (15 ms)
    assert window.spread_ms() == pytest.approx(14.0, abs=0.01)  # epoch floats
    assert window.problems() == []


def test_an_edge_that_never_lifted_leaves_no_end_and_is_named() -> None:
    """As the executor reads it (edge_stamps): a step it did not stamp is the edge's
    failure, and the edge has no lift."""
    from vnetbench.faults.executor import edge_stamps

    lifted = edge("router-switch1-fault", 0.008, 0.011)
    stuck = edge_stamps("router-switch2-fault", [Stamp(T0, 0.0, T0 + 0.01)], True, None, 2)
    window = FaultWindow((lifted, stuck), 3000.0)
    assert window.end is None and window.measured_ms is None
    assert window.problems() == ["router-switch2-fault: 1 of its 2 steps were not stamped"]


def test_a_helper_late_beyond_the_bound_is_named_with_its_lateness() -> None:
    late = LATE_BOUND_S + 0.5
    window = FaultWindow((edge("router-switch1-fault", 0.008, 0.011),
                          edge("router-switch2-fault", late + 0.01, 0.011, late_s=late)),
                         3000.0)
    said = window.problems()
    assert len(said) == 2  # its apply and its lift
    assert said[0].startswith("router-switch2-fault began its apply 520 ms after")
    # within the bound: said nothing
    assert FaultWindow((edge("a", 0.01, 0.01, late_s=LATE_BOUND_S / 2),),
                       3000.0).problems() == []


def waited(name: str, late_s: float, waited_s: float) -> EdgeStamps:
    return EdgeStamps(name, Stamp(T0 + late_s, late_s, T0 + late_s + 0.01, waited_s),
                      Stamp(T0 + 3, 0.001, T0 + 3.01, 3.0))


def test_a_step_woken_late_by_a_busy_host_is_a_note_within_half_the_shortest_fault(
        ) -> None:
    # waited 3 s, woken 34 ms late (CI, under a 21 Gbit/s stream): read from its stamps
    woken = FaultWindow((waited("switch2-fault", 0.034, 3.0),), 2000.0)
    assert woken.problems() == []
    assert woken.notes() == ["switch2-fault was woken for its apply 34 ms after the "
                             "instant, having waited 3.0 s (the host's cores were busy): "
                             "the fault is read from its stamps"]
    # past WOKEN_LATE_BOUND_S the fault's timing is not the one declared
    far = FaultWindow((waited("switch2-fault", WOKEN_LATE_BOUND_S + 0.01, 3.0),), 2000.0)
    assert far.notes() == []
    assert far.problems() == ["switch2-fault was woken for its apply 60 ms after the "
                              "instant, having waited 3.0 s (the host's cores were busy), "
                              "over 50 ms (half the shortest fault): its timing is not the "
                              "one declared"]
    # it never waited (its container started after the instant): a problem at any lateness
    started_late = FaultWindow((waited("switch2-fault", 0.034, 0.0),), 2000.0)
    assert started_late.notes() == []
    assert started_late.problems()[0].endswith("it was not waiting when the instant came, "
                                               "so the fault did not take effect in one "
                                               "step")


def test_a_kill_for_good_needs_no_lift_and_a_failed_helper_says_its_words() -> None:
    kill = FaultWindow((EdgeStamps("router-switch2", Stamp(T0, 0.0, T0 + 0.2)),), None)
    assert kill.problems() == [] and kill.start == T0 + 0.2 and kill.end is None
    failed = FaultWindow((EdgeStamps("x-fault", failure="apply (iptables exit 4)"),), 1000.0)
    assert failed.problems() == ["x-fault: apply (iptables exit 4)"]
    assert failed.start is None


def test_recovery_is_the_first_answer_after_the_lift_less_the_lift() -> None:
    # down from T0 to T0 + 3 s; answers again from T0 + 3.25 s (the overlay's own 250 ms)
    trace = probes_answered((-1, 0), (3.25, 5))
    lift = T0 + 3.0
    found = recovery_ms(trace, lift)
    assert found is not None and 250 <= found < 260  # the first probe at or after 3.25 s
    assert answered_after(trace, lift)
    assert recovery_ms(trace, None) is None


def test_a_path_silent_after_the_lift_did_not_recover_though_it_answered_during() -> None:
    # a loss burst: answers during the fault, none after its lift
    trace = probes_answered((-1, 0.5), (1.0, 2.0))
    assert not answered_after(trace, T0 + 3.0)
    assert recovery_ms(trace, T0 + 3.0) is None
    assert answered_after(trace, T0)


def test_an_event_no_edge_stamped_never_took_effect() -> None:
    """No edge at all (nothing staged, no engine step): said once, not as silence."""
    assert FaultWindow((), 1000.0).problems() == ["it never took effect (no step stamped)"]
    # a failure says why already: not said twice
    failed = FaultWindow((EdgeStamps("x-fault", failure="apply (iptables exit 4)"),), 1000.0)
    assert failed.problems() == ["x-fault: apply (iptables exit 4)"]
