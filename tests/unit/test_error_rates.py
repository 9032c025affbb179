"""tests/error_rates.py, the campaign behind docs/ab.md's error-rate tables: its plan
and its arms, which decide what each session measures."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.error_rates import (
    CEILING_SHARE,
    Planned,
    Session,
    append,
    arms,
    done_sessions,
    plan,
)


def session(overlay: str, tcp: float | None, scenario: str = "throughput") -> Session:
    return Session(key=f"aa/{overlay}/{scenario}/0/1", kind="aa", overlay=overlay,
                   scenario=scenario, cut_pct=0, attempt=1, exit_code=0, minutes=3.0,
                   directory="d", rounds=8, judged=5, no_change=5, worse=0, better=0,
                   unknown=0, tcp_verdict="no change", tcp_ratio=1.0, tcp_a_median=tcp,
                   fixed_judged=5, fixed_worse=0, fixed_better=0, fixed_tcp_verdict="no change",
                   a_rate_mbit=None, worse_metrics="")


def test_every_a_a_comes_before_the_cuts_that_need_its_ceiling() -> None:
    items = list(plan(vnet=True))
    kinds = [item.kind for item in items]
    assert kinds == sorted(kinds)  # "aa" < "cut": no cut before the last A/A
    assert len({item.key for item in items}) == len(items)
    assert sum(item.overlay == "vnet" for item in items) == 3  # join only, 3 tries
    assert {item.scenario for item in items if item.overlay == "vnet"} == {"join"}


def test_a_cut_shapes_both_arms_near_the_ceiling_and_b_below_a() -> None:
    done = [session("nebula", 400.0), session("nebula", 500.0), session("nebula", None),
            session("nebula", 900.0, scenario="room")]
    args, rate = arms(Planned("cut", "nebula", "throughput", 10, 1), done)
    assert rate == round(450 * CEILING_SHARE)  # the throughput A/As' median, not the room's
    assert rate is not None
    a_rate, b_rate = f"backbone.rate={rate:g}mbit", f"backbone.rate={round(rate * 0.9, 1):g}mbit"
    assert args[args.index(a_rate) - 1] == "--a" and args[args.index(b_rate) - 1] == "--b"
    with pytest.raises(SystemExit, match="ceiling is unknown"):
        arms(Planned("cut", "tinc", "throughput", 10, 1), done)


def test_an_a_a_gives_both_arms_the_same_room() -> None:
    args, rate = arms(Planned("aa", "tinc", "room", 0, 1), [])
    assert rate is None and "--b" not in args  # no --b: B is A, whatever A holds
    assert "machines=50" in args


def test_sessions_written_are_read_back_whole(tmp_path: Path) -> None:
    written = [session("tinc", 700.5), session("wireguard", None)]
    for one in written:
        append(tmp_path, one)
    assert done_sessions(tmp_path) == written
