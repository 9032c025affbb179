"""failover's faults as data: the standard set, the control plane's applicability,
roles, labels and the pass result (no engine)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vnetbench.errors import UserError
from vnetbench.measure.outage import parse_ping_trace, parse_stream_trace
from vnetbench.outcome import Applicable, NotApplicable, State
from vnetbench.overlays.baseline import Baseline
from vnetbench.overlays.nebula import Nebula
from vnetbench.scenarios import get_scenario
from vnetbench.scenarios.failover import (
    FaultOutcome,
    backbone_faulted,
    faults_of,
    labelled,
    pick_roles,
    result_of,
)
from vnetbench.topology import Fault, parse_topology

DATA = Path(__file__).resolve().parents[2] / "data" / "failover"
BASE = {"name": "t", "switches": 2, "agents": 4}


def test_without_faults_the_standard_set_kills_the_measured_agents_switch() -> None:
    topology = parse_topology(BASE, "t")
    kinds = [f.kind for f in faults_of(topology, "switch2")]
    assert kinds == ["switch-restart", "backbone-down", "loss-burst"]
    assert faults_of(topology, "switch2")[0].kill == "switch2"


def test_declared_faults_replace_the_standard_set_and_repeats_are_numbered() -> None:
    topology = parse_topology({**BASE, "faults": [
        {"at": "1s", "kill": "switch1"}, {"at": "1s", "kill": "switch2"}]}, "t")
    names = [label for label, _ in labelled(faults_of(topology, "switch2"))]
    assert names == ["switch-kill", "switch-kill-2"]


def test_a_control_plane_fault_is_not_applicable_where_there_is_none() -> None:
    scenario = get_scenario("failover")
    plain = parse_topology(BASE, "t")
    control = parse_topology({**BASE, "faults": [{"kill": "control-plane",
                                                  "restart_after": "2s"}]}, "t")
    assert isinstance(scenario.applicability(Baseline(), plain), Applicable)
    assert scenario.applicability(Nebula(), control) == NotApplicable(
        "nebula has no control plane apart from its data path")


def test_roles_put_the_local_prober_beside_the_target() -> None:
    topology = parse_topology(BASE, "t")
    roles = pick_roles(topology, {a.name: a.switch for a in topology.agents})
    assert roles.switch == "switch2" and {roles.target, roles.local} == {"agent2", "agent4"}
    assert roles.remote in ("agent1", "agent3")
    with pytest.raises(UserError, match="two agents on one switch"):
        pick_roles(parse_topology({**BASE, "agents": 2}, "t"), {"agent1": "switch1",
                                                                 "agent2": "switch2"})


def test_a_link_fault_changes_the_backbone_alone() -> None:
    topology = parse_topology({**BASE, "links": {"backbone": {"delay": "5ms"}}}, "t")
    down = backbone_faulted(topology, Fault.model_validate({"link": "backbone",
                                                            "for": "1s"}))
    spike = backbone_faulted(topology, Fault.model_validate({"delay": "200ms", "for": "1s"}))
    assert down.links.backbone.loss == 100 and down.links.site == topology.links.site
    assert spike.links.backbone.delay == 205


def test_the_pass_names_the_faults_kills_and_its_figures() -> None:
    fault = Fault.model_validate({"kill": "switch2", "restart_after": "3s"})
    outcome = FaultOutcome("switch-restart", fault, injected_at=1796127228.37,
                           remote=parse_ping_trace((DATA / "ping-switch-restart.txt")
                                                   .read_text()),
                           stream=parse_stream_trace((DATA / "iperf3-switch-restart.txt")
                                                     .read_text()),
                           killed=["router-switch2"])
    result = result_of([outcome])
    assert result.state is State.OK and result.fault_killed == {"router-switch2"}
    assert result.metrics["lost_switch-restart"] == (199, "count")
    assert result.metrics["tcp_survived_switch-restart"] == (1, "bool")
    assert result.metrics["rejoin_seconds_switch-restart"] == (None, "s")  # no join events
    assert any(p.metric == "answered_switch-restart" and p.value == 0 for p in result.series)


def test_a_path_that_never_came_back_is_partial_with_why() -> None:
    fault = Fault.model_validate({"kill": "switch2"})
    text = "\n".join(line for line in (DATA / "ping-switch-restart.txt").read_text()
                     .splitlines() if "bytes from" not in line or "icmp_seq=1 " in line
                     or int(line.split("icmp_seq=")[1].split()[0]) < 177)
    outcome = FaultOutcome("switch-kill", fault, injected_at=1796127228.37,
                           remote=parse_ping_trace(text),
                           not_recovered={"agent2": ["wg: handshake did not complete"]})
    result = result_of([outcome])
    assert result.state is State.PARTIAL
    assert "did not answer again" in result.status and "handshake did not" in result.status


def test_a_probe_that_ended_before_its_window_gives_no_outage_figure() -> None:
    """Never answered again: silence up to the window's end is the outage's lower bound
    worth reporting; silence cut short because the probe itself ended (its namespace's
    container went with the fault: tinc, measured) is no figure at all."""
    from vnetbench.measure.outage import Outage
    from vnetbench.scenarios.failover import FaultOutcome
    from vnetbench.topology import Fault

    outcome = FaultOutcome("switch-kill", Fault(kill="switch2"), window_s=15.0)
    assert outcome.cut_short(Outage(None, None, 332.0, 20, 0))
    assert not outcome.cut_short(Outage(None, None, 15_100.0, 1500, 0))
    assert not outcome.cut_short(None)
