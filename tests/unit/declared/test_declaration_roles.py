"""Commands find a scenario by the role it plays (PATH_ROLE: calibrate's path and
report.md's overlay / baseline table; JOIN_ROLE: calibrate --scale's joins; LOAD_ROLE:
capacity's steps), never by its name; a declaration's figures and roles read only
metrics it declares, checked when it is made."""

from __future__ import annotations

import dataclasses

import pytest

from vnetbench.core.metrics import Metric
from vnetbench.declared import DECLARATIONS, DECLARED, playing
from vnetbench.declared.declaration import (
    JOIN_ROLE,
    LOAD_ROLE,
    PATH_ROLE,
    ROLES,
    Cumulative,
    Declaration,
    PercentileCdf,
    Role,
    Timeline,
    figure_metrics,
)
from vnetbench.scenarios import SCENARIOS, scenario_playing


def test_each_role_is_played_by_one_scenario_that_declares_its_metrics() -> None:
    assert {role.name: playing(role).name for role in ROLES} == {
        "path": "throughput", "join": "join", "load": "room"}
    for role in ROLES:
        player = playing(role)
        assert [player.metric(m).name for m in role.metrics] == list(role.metrics)
        assert scenario_playing(role) is SCENARIOS[player.name]


def test_a_role_played_by_none_or_two_is_refused() -> None:
    unplayed = Role("nobody", "no scenario plays it", ())
    with pytest.raises(LookupError, match="no scenario"):
        playing(unplayed)
    twice = [dataclasses.replace(DECLARED["join"], name="join-again"), *DECLARATIONS]
    with pytest.raises(LookupError, match="join-again, join: one must"):
        playing(JOIN_ROLE, twice)


def test_the_roles_name_what_their_readers_read() -> None:
    assert PATH_ROLE.metrics == ("tcp_mbit", "rtt_mean_ms")  # rate, then round trip
    assert JOIN_ROLE.metrics[0] == "join_seconds"
    assert {"room_p99_ms", "room_failed", "room_fairness"} <= set(LOAD_ROLE.metrics)


def toy(**given: object) -> Declaration:
    return Declaration(name="toy", description="a toy", runtime="toy:Toy",
                       metrics=(Metric("toy_ms", "ms"), Metric("toy_at_s", "s")),
                       **given)  # type: ignore[arg-type]


def test_a_figure_or_role_reading_an_undeclared_metric_is_refused() -> None:
    toy(figures=(Timeline("toy", "toy_ms", "toy_at_s", "toy_at_s", "t", "ms", "s"),))
    with pytest.raises(KeyError, match="toy declares no metric 'toy_end_s'"):
        toy(figures=(Timeline("toy", "toy_ms", "toy_at_s", "toy_end_s", "t", "ms", "s"),))
    with pytest.raises(KeyError, match="'toy_q_ms'"):
        toy(figures=(PercentileCdf("toy-cdf", "t", "toy_q_ms", "ms", "share", "requests"),))
    with pytest.raises(KeyError, match="'up_bytes'"):
        toy(figures=(Cumulative("bytes", (("up_bytes", "up"),), "{of}", "MiB", "s"),))
    with pytest.raises(KeyError, match="'tcp_mbit'"):
        toy(roles=(PATH_ROLE,))


def test_a_per_fault_timeline_s_metric_carries_the_fault_and_a_schedule_s_does_not() -> None:
    timelines = [(d, f) for d in DECLARATIONS for f in d.figures if isinstance(f, Timeline)]
    assert {f.name for _, f in timelines} == {"failover", "room-faults", "throughput-faults"}
    for declared, spec in timelines:
        assert ("fault" in declared.metric(spec.metric).dimensions) == spec.per_fault
        assert all("fault" in declared.metric(m).dimensions for m in (spec.start, spec.end))
        assert all(declared.metric(m) for m in figure_metrics(spec))
