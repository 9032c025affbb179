"""A schedule of faults expanded into timed steps: each kind at the instants its
entry declares, the machines it chooses named and reproducible, the partition's
cross edges exactly, and the steps in an order an executor can fire."""

from __future__ import annotations

from typing import Any

import pytest

from vnetbench.errors import UserError
from vnetbench.faults.schedule import (
    EVERY_EDGE,
    Action,
    BackboneShape,
    Cut,
    Step,
    Target,
    event_labels,
    expand,
)
from vnetbench.model.topology import Topology, parse_topology

MACHINES = [f"agent{n}" for n in range(1, 21)]


def room(*faults: dict[str, Any], switches: int = 3, **links: Any) -> Topology:
    """A room's stack: 20 machines and the server, as the room scenario builds it."""
    agents = [{"name": m, "switch": "switch1"} for m in MACHINES]
    return parse_topology({"name": "t", "switches": switches, "settings": {"machines": 20},
                           "agents": [*agents, {"name": "server", "switch": "switch2"}],
                           "links": {"backbone": links}, "faults": list(faults)}, "t")


def when(steps: tuple[Step, ...] | list[Step], action: Action) -> list[float]:
    return [s.at_ms for s in steps if s.action is action]


def test_a_flap_gives_two_steps_a_round_at_its_instants() -> None:
    steps = expand(room({"at": "5s", "flap": "backbone", "times": 5, "down": "1s",
                         "up": "500ms"})).steps
    assert len(steps) == 10
    assert when(steps, Action.DROP_ON) == [5000, 6500, 8000, 9500, 11000]
    assert when(steps, Action.DROP_OFF) == [6000, 7500, 9000, 10500, 12000]
    assert [s.cycle for s in steps] == [1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
    assert all(s.cuts == (EVERY_EDGE,) and s.event == "backbone-flap" for s in steps)
    assert {s.drop_percent for s in steps if s.action is Action.DROP_ON} == {100.0}


def test_a_partition_drops_exactly_the_edges_between_its_sets() -> None:
    on, off = expand(room({"at": "1s", "partition": [["switch1"], ["switch2", "switch3"]],
                           "for": "3s"}, switches=4)).steps
    cross = {Cut("switch1", "switch2"), Cut("switch1", "switch3"), Cut("switch2", "switch1"),
             Cut("switch3", "switch1")}
    assert set(on.cuts) == cross and len(on.cuts) == 4  # not switch2-switch3, nor switch4
    assert (on.at_ms, on.action, off.at_ms, off.action) == (
        1000, Action.DROP_ON, 4000, Action.DROP_OFF)
    assert off.cuts == on.cuts


def test_a_ramp_steps_from_its_start_to_its_end_then_shapes_as_planned() -> None:
    steps = expand(room({"at": "2s", "ramp": "delay", "from": "0ms", "to": "100ms",
                         "over": "2s"}, rate="50mbit", loss="1%")).steps
    shapes = [s for s in steps if s.action is Action.SHAPE]
    assert [s.at_ms for s in shapes] == [2000, 2500, 3000, 3500, 4000]  # every 500 ms
    assert [s.shape for s in shapes] == [BackboneShape(1.0, d, 50_000_000)
                                         for d in (0, 25, 50, 75, 100)]
    assert steps[-1].action is Action.RESTORE and steps[-1].at_ms == 4500  # held a step


def test_a_ramp_s_steps_are_at_most_its_step_and_equal() -> None:
    steps = expand(room({"at": "0s", "ramp": "rate", "from": "10mbit", "to": "1mbit",
                         "over": "1.2s", "step": "500ms", "hold": "1s"})).steps
    assert when(steps, Action.SHAPE) == [0, 400, 800, 1200]  # ceil(1.2 / 0.5) = 3 steps
    assert [s.shape.rate for s in steps if s.shape] == [10_000_000, 7_000_000, 4_000_000,
                                                        1_000_000]
    assert when(steps, Action.RESTORE) == [2200]


def test_churn_restarts_its_share_one_at_a_time_over_the_span() -> None:
    schedule = expand(room({"at": "5s", "churn": "20%", "over": "10s"}))
    kills = [s for s in schedule.steps if s.action is Action.KILL]
    starts = [s for s in schedule.steps if s.action is Action.START]
    assert [s.at_ms for s in kills] == [5000, 7500, 10000, 12500]  # 4 of 20, every 10/4 s
    assert [s.at_ms for s in starts] == [s.at_ms for s in kills]
    chosen = [s.targets[0] for s in kills]
    assert len(set(chosen)) == 4 and all(t.role == "machine" for t in chosen)
    assert [s.targets[0] for s in starts] == chosen
    # at one instant its kill, then its start
    assert [s.action for s in schedule.steps[:2]] == [Action.KILL, Action.START]
    assert schedule.events[0].targets == tuple(chosen)
    assert expand(room({"at": "5s", "churn": "20%", "over": "10s"})) == schedule


def test_kills_name_their_roles_and_the_machines_they_choose() -> None:
    schedule = expand(room({"at": "1s", "kill": {"machines": 3}, "restart_after": "2s"},
                           {"at": "1s", "kill": "server"},
                           {"at": "2s", "kill": "switch3", "restart_after": "1s"},
                           {"at": "4s", "kill": "control-plane"}))
    machines = schedule.events[0].targets
    assert len(machines) == 3 and {t.name for t in machines} <= set(MACHINES)
    assert [(s.at_ms, s.action, s.targets) for s in schedule.steps] == [
        (1000, Action.KILL, machines), (1000, Action.KILL, (Target("server", "server"),)),
        (2000, Action.KILL, (Target("switch", "switch3"),)),
        (3000, Action.START, machines), (3000, Action.START, (Target("switch", "switch3"),)),
        (4000, Action.KILL, (Target("control-plane", "control-plane"),))]
    assert schedule.events[1].end_ms is None  # for good


def test_today_s_faults_expand_as_failover_applies_them() -> None:
    steps = expand(room({"at": "1s", "link": "backbone", "for": "2s"},
                        {"at": "4s", "loss": "30%", "for": "1s"},
                        {"at": "1s", "delay": "200ms", "for": "1s"}, delay="10ms")).steps
    assert [(s.at_ms, s.action, s.drop_percent) for s in steps] == [
        (1000, Action.DROP_ON, 100.0), (1000, Action.SHAPE, None),
        (2000, Action.RESTORE, None), (3000, Action.DROP_OFF, None),
        (4000, Action.DROP_ON, 30.0), (5000, Action.DROP_OFF, None)]
    assert steps[1].shape == BackboneShape(0.0, 210.0, None)


def test_at_one_instant_a_lift_comes_before_the_next_apply() -> None:
    steps = expand(room({"at": "1s", "link": "backbone", "for": "2s"},
                        {"at": "3s", "loss": "50%", "for": "1s"})).steps
    assert [s.action for s in steps if s.at_ms == 3000] == [Action.DROP_OFF, Action.DROP_ON]


def test_labels_are_kinds_numbered_from_the_second() -> None:
    faults = room({"at": "1s", "link": "backbone", "for": "1s"},
                  {"at": "3s", "link": "backbone", "for": "1s"},
                  {"at": "1s", "churn": "10%", "over": "1s"}).faults
    assert event_labels(faults) == ["backbone-down", "backbone-down-2", "churn"]


def test_a_schedule_that_does_not_fit_the_machines_given_is_refused() -> None:
    topology = room({"at": "1s", "kill": {"machines": 5}, "restart_after": "1s"},
                    {"at": "3s", "churn": "10%", "over": "1s"})
    with pytest.raises(UserError, match=r"faults.0.kill: 5 machines, and this room has 3.*"
                       r"faults.1.churn: 10% of this room's 3 machines restarts none"):
        expand(topology, machines=["a", "b", "c"])
    assert {t.name for t in expand(topology, machines=[f"m{i}" for i in range(10)])
            .events[0].targets} <= {f"m{i}" for i in range(10)}
