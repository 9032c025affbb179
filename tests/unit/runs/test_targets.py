"""The testbed against the bare reference: each ratio, its target and its verdict."""

from __future__ import annotations

from vnetbench.measure.engine_floor import FloorTiming
from vnetbench.runs.targets import (
    TARGET_N,
    Figure,
    PathRound,
    StackTiming,
    figure_rows,
    floor_figures,
    path_figures,
    ratio,
    stack_timing,
    timing_figures,
)


def test_a_ratio_needs_both_values() -> None:
    assert ratio(2.0, 4.0) == 0.5
    assert ratio(None, 4.0) is None
    assert ratio(2.0, 0.0) is None


def test_only_the_target_size_is_judged() -> None:
    figures = timing_figures("bring-up", {20: 5.0, 50: 9.0, TARGET_N: 31.0},
                             {20: 0.3, TARGET_N: 3.0}, 4.0, "the engine starts 6 a second")
    by_name = {f.name: f for f in figures}
    assert set(by_name) == {"bring-up of 20 agents / bare namespaces",
                            f"bring-up of {TARGET_N} agents / bare namespaces"}
    small = by_name["bring-up of 20 agents / bare namespaces"]
    assert small.met is None and small.target == ""
    big = by_name[f"bring-up of {TARGET_N} agents / bare namespaces"]
    assert big.met is False and big.target == "<= 4"
    assert abs((big.value or 0) - 31.0 / 3.0) < 1e-9
    assert "the engine starts 6 a second" in big.note  # a miss says why


def test_a_met_target_gives_no_reason() -> None:
    (figure,) = timing_figures("teardown", {TARGET_N: 3.0}, {TARGET_N: 1.0}, 4.0, "why")
    assert figure.met is True and "why" not in figure.note


def test_the_path_rtt_is_at_most_and_tcp_at_least() -> None:
    """The median of the rounds' ratios, each round against its own bare path: a round
    whose both paths were slow (the host's moment) counts as the ratio it gives."""
    rounds = [PathRound((0.05, 9000.0), (0.04, 10000.0), (0.046, 9500.0)),
              PathRound((0.10, 4500.0), (0.08, 5000.0), (0.09, 4800.0)),  # both slow
              PathRound((0.06, 9000.0), (0.04, 10000.0), (0.05, 9500.0))]
    rtt, tcp = path_figures(rounds)
    assert rtt.met is True and abs((rtt.value or 0) - 1.25) < 1e-9  # 1.25, 1.25, 1.5
    assert tcp.met is True and abs((tcp.value or 0) - 0.9) < 1e-9
    assert "1.25, 1.25, 1.50x" in rtt.note and "median of 3 rounds" in rtt.note
    assert "0.90, 1.00, 1.00x" not in rtt.note  # TCP's ratios are in TCP's note
    assert "1.09, 1.11, 1.20x" in rtt.note  # against netfilter on: beyond it
    assert "bare with bridge netfilter and conntrack on 9500 Mbit/s" in tcp.note
    ahead = path_figures([PathRound((0.1, 7000.0), (0.04, 10000.0), (None, None))])
    assert ahead[0].met is False and ahead[1].met is False


def test_nothing_measured_is_no_verdict() -> None:
    for rounds in ([], [PathRound((None, None), (None, None), (None, None))]):
        rtt, tcp = path_figures(rounds)
        assert rtt.met is None and rtt.value is None and tcp.met is None


def test_rows_say_met_and_not_met() -> None:
    rows = figure_rows([Figure("a", 1.0, "x", "<= 4", True), Figure("b", None, "x", "", None),
                        Figure("c", 5.0, "x", "<= 4", False)])
    assert [row[""] for row in rows] == ["met", "", "NOT met"]
    assert rows[1]["value"] == "n/a x"


def _stack(up: float, down: float) -> StackTiming:
    return StackTiming(203, up, down, (("render", 0.5), ("up", up - 1.5), ("shape", 1.0),
                                       ("save logs", 1.0), ("remove", down - 1.0)))


def test_the_floor_ratio_is_judged_at_the_target_size_only() -> None:
    floor = FloorTiming(203, up_s=16.0, down_s=4.0)
    judged = floor_figures(TARGET_N, _stack(up=24.0, down=5.0), floor, targeted=True)
    ratios = {f.name: f for f in judged if f.unit == "x"}
    up, down = ratios["bring-up of 200 agents / engine floor"], \
        ratios["teardown of 200 agents / engine floor"]
    assert up.value == 1.5 and up.met is False  # 24 / 16 > 1.25
    assert down.value == 1.25 and down.met is True  # 5 / 4: at the bound, met
    # the difference by step: compose up 22.5 s against the floor's 16 s
    assert "compose up 22.50 (the floor's 16.00, so +6.50" in up.note
    assert "remove 4.00 (the floor's 4.00, so +0.00)" in down.note
    small = floor_figures(20, _stack(up=24.0, down=5.0), floor, targeted=False)
    assert all(f.met is None and f.target == "" for f in small)


def test_no_floor_is_no_ratio_and_says_why() -> None:
    figures = floor_figures(TARGET_N, _stack(up=24.0, down=5.0), None, targeted=True)
    assert [f.value for f in figures] == [None, None]
    assert all(f.met is None and "not measured" in f.note for f in figures)


def test_a_repeated_step_is_summed() -> None:
    timing = stack_timing([("render", 0.0, 1.0), ("up", 1.0, 3.0), ("render", 3.0, 3.5)],
                          5, {"up": 3.5, "down": 1.0})
    assert timing.seconds("render") == 1.5 and timing.seconds("shape") == 0


def test_a_nan_figure_is_not_measured_not_missed() -> None:
    """The delay line's error from two medians of no rows is NaN, which compared as a
    miss (abs(nan) <= bound is False)."""
    import json
    import math

    from vnetbench.runs.calibration import as_json
    from vnetbench.runs.targets import calibration_verdict, without_nan
    from vnetbench.terminal.exitstatus import ExitStatus

    nan = math.nan
    delay = Figure("10 ms each way: added RTT - 20 ms", nan, "ms", "within +-1.5",
                   abs(nan) <= 1.5)
    kept = without_nan(delay)
    assert (kept.value, kept.met, kept.target) == (None, None, "within +-1.5")
    assert calibration_verdict([kept])[0] == ExitStatus.ENVIRONMENT
    assert calibration_verdict([delay])[0] == ExitStatus.MISSED  # what it was
    assert json.loads(as_json([kept]))["figures"][0]["value"] is None  # JSON, not NaN
    measured = Figure("idle host CPU", 3.2, "% of a core")
    assert without_nan(measured) is measured
