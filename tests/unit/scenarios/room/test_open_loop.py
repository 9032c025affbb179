"""The open-loop room's schedule, computed on the host: evenly spaced with the closed
loop's phases, or Poisson arrivals reproducible per machine and pass, and an argv
encoding that never exceeds Linux's per-argument limit."""

from __future__ import annotations

import itertools
import statistics

import pytest

from vnetbench.errors import UserError
from vnetbench.scenarios.room.open_loop import (
    MAX_ARGUMENT_BYTES,
    MachineSchedule,
    decode,
    encode,
    encoded_bound,
    plan_fits,
    requests_per_machine,
    room_schedules,
)

MACHINES = ["agent1", "agent2", "agent3", "agent4"]


def test_even_arrivals_keep_the_rate_and_spread_the_machines_over_one_gap() -> None:
    schedules = room_schedules(MACHINES, 5, 2, 3, "even", pass_no=1)
    assert schedules["agent1"].offsets_us == tuple(range(0, 2_000_000, 200_000))
    assert [s.offsets_us[0] for s in schedules.values()] == [0, 50_000, 100_000, 150_000]
    assert schedules["agent2"].size_indexes == (0, 1, 2, 0, 1, 2, 0, 1, 2, 0)
    assert {len(s) for s in schedules.values()} == {10}  # 5/s for 2 s


def test_requests_per_machine_counts_the_one_at_zero() -> None:
    assert requests_per_machine(5, 2) == 10
    assert requests_per_machine(3, 0.5) == 2  # at 0 and 1/3 s
    assert requests_per_machine(0.1, 1) == 1


def test_poisson_arrivals_are_reproducible_per_machine_and_pass_and_poisson_like() -> None:
    first = room_schedules(MACHINES, 50, 20, 1, "poisson", pass_no=1)
    assert first == room_schedules(MACHINES, 50, 20, 1, "poisson", pass_no=1)
    second = room_schedules(MACHINES, 50, 20, 1, "poisson", pass_no=2)
    assert first["agent1"] != second["agent1"] and first["agent1"] != first["agent2"]
    offsets = first["agent1"].offsets_us
    assert len(offsets) == 1000 and list(offsets) == sorted(offsets)
    assert offsets[0] >= 0 and offsets[-1] < 20_000_000
    gaps = [(b - a) / 1e6 for a, b in itertools.pairwise(offsets)]
    # exponential gaps: mean 1/rate, standard deviation equal to the mean
    assert statistics.mean(gaps) == pytest.approx(0.02, rel=0.1)
    assert statistics.stdev(gaps) == pytest.approx(0.02, rel=0.15)


def test_encoding_round_trips_and_is_compact() -> None:
    schedule = room_schedules(MACHINES, 5, 60, 3, "even", pass_no=1)["agent3"]
    text = encode(schedule)
    assert decode(text) == schedule
    assert text.startswith("255s.0,4abk.1,")  # 100000 us, then 200000 us, in base 36
    assert len(text) <= 7 * 300  # the docstring's 7 bytes a token


@pytest.mark.parametrize("arrivals", ["even", "poisson"])
@pytest.mark.parametrize(("rate", "seconds"), [(5, 60), (100, 30), (1000, 10), (0.5, 3600)])
def test_the_bound_holds_every_real_encoding(arrivals: str, rate: float,
                                             seconds: float) -> None:
    schedule = room_schedules(["a", "b"], rate, seconds, 10, arrivals,  # type: ignore[arg-type]
                              pass_no=3)["b"]
    assert len(encode(schedule)) <= encoded_bound(len(schedule), seconds + 1 / rate)


def test_a_plan_too_long_for_one_argument_is_refused_before_it_is_drawn() -> None:
    plan_fits(5, 2400)  # 40 minutes at 5/s fit
    with pytest.raises(UserError, match=r"18000 requests.*MAX_ARG_STRLEN.*room_loop: closed"):
        plan_fits(5, 3600)
    too_many = MachineSchedule(tuple(range(0, 40_000_000, 1000)), (0,) * 40_000)
    with pytest.raises(UserError, match="40000 requests"):
        encode(too_many)
    assert MAX_ARGUMENT_BYTES == 131_071
