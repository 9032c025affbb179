"""failover's faults as data: the standard set, the control plane's applicability,
roles, labels and the pass result (no engine)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vnetbench.core.outcome import Applicable, NotApplicable, State
from vnetbench.errors import UserError
from vnetbench.faults.window import EdgeStamps, FaultWindow, Stamp
from vnetbench.measure.outage import parse_ping_trace, parse_stream_trace
from vnetbench.model.topology import Fault, parse_topology
from vnetbench.overlays.baseline import Baseline
from vnetbench.overlays.nebula import Nebula
from vnetbench.scenarios import get_scenario
from vnetbench.scenarios.failover import (
    faults_of,
    labelled,
    pick_roles,
)
from vnetbench.scenarios.failover_result import FaultOutcome, result_of

DATA = Path(__file__).resolve().parents[2] / "data" / "failover"
BASE = {"name": "t", "switches": 2, "agents": 4}


def engine_window(fault: Fault, start: float, end: float | None = None) -> FaultWindow:
    """A kill's stamps as the engine calls give them: each call 10 ms long, on time."""
    def step(done: float) -> Stamp:
        return Stamp(done - 0.01, 0.0, done)
    return FaultWindow((EdgeStamps("router-switch2", step(start),
                                   step(end) if end is not None else None),),
                       fault.lasts_ms)


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


def test_the_pass_names_the_faults_kills_and_its_figures() -> None:
    fault = Fault.model_validate({"kill": "switch2", "restart_after": "3s"})
    outcome = FaultOutcome("switch-restart", fault,
                           window=engine_window(fault, 1796127228.37, 1796127231.37),
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
    outcome = FaultOutcome("switch-kill", fault, window=engine_window(fault, 1796127228.37),
                           remote=parse_ping_trace(text), rejoined=0,
                           no_rejoin_event={"agent2": ["wg: handshake did not complete"]})
    result = result_of([outcome])
    assert result.state is State.PARTIAL
    assert "answered no probe after the fault" in result.status
    assert "agent2 logged no rejoin event" in result.status
    assert "handshake did not" in result.status
    assert result.metrics["not_recovered_switch-kill"] == (1, "bool")
    assert result.metrics["no_rejoin_event_switch-kill"] == (1, "count")


def test_a_probe_that_ended_before_its_window_gives_no_outage_figure() -> None:
    """Never answered again: silence up to the window's end is the outage's lower bound
    worth reporting; silence cut short because the probe itself ended (its namespace's
    container went with the fault: tinc, measured) is no figure at all."""
    from vnetbench.measure.outage import Outage
    from vnetbench.model.topology import Fault
    from vnetbench.scenarios.failover_result import FaultOutcome

    outcome = FaultOutcome("switch-kill", Fault(kill="switch2"), window_s=15.0)
    assert outcome.cut_short(Outage(None, None, 332.0, 20, 0))
    assert not outcome.cut_short(Outage(None, None, 15_100.0, 1500, 0))
    assert not outcome.cut_short(None)


def test_a_latecomer_gives_its_join_and_its_death_is_the_faults() -> None:
    fault = Fault.model_validate({"kill": "switch2", "restart_after": "3s"})
    outcome = FaultOutcome("switch-restart", fault,
                           window=engine_window(fault, 1796127228.37, 1796127231.4),
                           remote=parse_ping_trace((DATA / "ping-switch-restart.txt")
                                                   .read_text()),
                           killed=["hub-switch2"], latecomer="agent6",
                           latecomer_started_at=1796127228.9, late_join_s=3.1,
                           late_joined_during=False, latecomer_service="agent6")
    result = result_of([outcome])
    assert result.metrics["late_join_s_switch-restart"] == (3.1, "s")
    assert result.metrics["late_joined_during_switch-restart"] == (0, "bool")
    assert result.fault_killed == {"hub-switch2", "agent6"}
    assert "late join 3.1s" in str(result.summary["switch-restart"])


def test_without_a_latecomer_there_is_no_late_join_row() -> None:
    fault = Fault.model_validate({"loss": "50%", "for": "2s"})
    outcome = FaultOutcome("loss-burst", fault,
                           window=engine_window(fault, 1796127228.37, 1796127230.37),
                           remote=parse_ping_trace((DATA / "ping-switch-restart.txt")
                                                   .read_text()))
    assert not any(name.startswith("late_") for name in result_of([outcome]).metrics)


def test_the_stack_has_a_spare_machine_per_switch_where_joins_are_timed() -> None:
    topology = parse_topology({**BASE, "agents": 2}, "t")
    failover = get_scenario("failover")
    assert len(failover.stack_topology(topology, Nebula()).agents) == 6
    assert len(failover.stack_topology(topology, Baseline()).agents) == 4


def staged_window(fault: Fault, applied: list[float], lifted: list[float],
                  late_s: float = 0.001) -> FaultWindow:
    """Helpers' stamps: each began `late_s` after its instant (the first applied less
    10 ms; the lift the declared span later)."""
    instant = min(applied) - 0.01
    lift_instant = instant + (fault.lasts_ms or 0) / 1000
    return FaultWindow(tuple(
        EdgeStamps(f"router-switch{n}-fault", Stamp(instant + late_s, late_s, a),
                   Stamp(lift_instant + late_s, late_s, b))
        for n, (a, b) in enumerate(zip(applied, lifted, strict=True), start=1)),
        fault.lasts_ms)


def test_a_staged_fault_reports_its_effective_window_recovery_and_marks() -> None:
    fault = Fault.model_validate({"link": "backbone", "for": "3s"})
    trace = parse_ping_trace((DATA / "ping-switch-restart.txt").read_text())
    # the trace's silence: last answer 228.3566, first again 231.6607
    window = staged_window(fault, [1796127228.360, 1796127228.365],
                           [1796127231.600, 1796127231.610])
    result = result_of([FaultOutcome("backbone-down", fault, window=window, remote=trace)])
    metric = result.metrics
    assert result.state is State.OK, result.status
    assert metric["fault_ms_backbone-down"] == (3245.0, "ms")  # 231.610 - 228.365
    assert metric["fault_declared_ms_backbone-down"] == (3000.0, "ms")
    assert metric["recovery_ms_backbone-down"] == (50.7, "ms")  # 231.6607 - 231.610
    assert metric["not_recovered_backbone-down"] == (0, "bool")
    first = trace.replies[0].at
    assert metric["fault_at_s_backbone-down"][0] == round(1796127228.365 - first, 3)
    assert metric["fault_end_s_backbone-down"][0] == round(1796127231.610 - first, 3)
    assert "in effect 3245ms of 3000, recovery 51ms" in str(result.summary["backbone-down"])


def test_a_late_helper_makes_the_pass_partial_naming_it() -> None:
    fault = Fault.model_validate({"link": "backbone", "for": "3s"})
    trace = parse_ping_trace((DATA / "ping-switch-restart.txt").read_text())
    on_time = staged_window(fault, [1796127228.360], [1796127231.600])
    late = staged_window(fault, [1796127229.200], [1796127231.610], late_s=0.84)
    window = FaultWindow((on_time.edges[0], EdgeStamps("router-switch2-fault",
                                                       *(late.edges[0].apply,
                                                         late.edges[0].lift))), 3000.0)
    # as inject takes them from the executor's reading of the window
    said = window.problems()
    result = result_of([FaultOutcome("backbone-down", fault, window=window, remote=trace,
                                     problems=said)])
    assert result.state is State.PARTIAL
    assert "router-switch2-fault began its apply 840 ms after the instant" in result.status
    assert "router-switch1-fault" not in result.status


def test_never_recovered_means_no_answer_after_the_lift_not_a_missing_rejoin() -> None:
    """Words that mean what they say: an agent that logged no new join event while its
    path answers is a rejoin figure; 'never recovered' is a path silent after the
    lift."""
    fault = Fault.model_validate({"kill": "switch2", "restart_after": "3s"})
    trace = parse_ping_trace((DATA / "ping-switch-restart.txt").read_text())
    answered = FaultOutcome("switch-restart", fault,
                            window=engine_window(fault, 1796127228.37, 1796127231.4),
                            remote=trace, rejoined=1, expected_rejoins=2,
                            no_rejoin_event={"agent4": ["handshake kept"]})
    result = result_of([answered])
    assert result.metrics["not_recovered_switch-restart"] == (0, "bool")
    assert result.metrics["no_rejoin_event_switch-restart"] == (1, "count")
    assert "agent4 logged no rejoin event" in result.status
    assert "never recovered" not in result.status
    # the same trace, the lift stamped after its last answer: never recovered
    silent = FaultOutcome("switch-restart", fault,
                          window=engine_window(fault, 1796127228.37, 1796127235.3),
                          remote=trace)
    said = result_of([silent])
    assert said.metrics["not_recovered_switch-restart"] == (1, "bool")
    assert said.metrics["recovery_ms_switch-restart"] == (None, "ms")
    assert "never recovered, the path answered no probe after the fault was lifted" \
        in said.status
    # no join events to count (the baseline): no figure, rather than 0
    assert result_of([FaultOutcome("switch-restart", fault, remote=trace,
                                   window=engine_window(fault, 1796127228.37,
                                                        1796127231.4))]
                     ).metrics["no_rejoin_event_switch-restart"] == (None, "count")


def test_the_restart_asked_bounds_a_join_made_during_the_fault() -> None:
    """A latecomer's join is during the fault only before the restart was asked: the
    role's namespace routes from its start, some ms before the engine's StartedAt."""
    fault = Fault(kill="switch2", restart_after="3s")
    window = FaultWindow((EdgeStamps("switch2", Stamp(100.0, 0.0, 100.05),
                                     Stamp(103.0, 0.0, 103.4)),), fault.lasts_ms)
    outcome = FaultOutcome("switch-restart", fault, window=window)
    assert outcome.lift_asked == 103.0 and outcome.effective_end == 103.4
    assert FaultOutcome("switch-restart", fault).lift_asked is None


def test_failover_refuses_a_schedule_s_events_naming_them() -> None:
    topology = parse_topology({**BASE, "faults": [
        {"at": "1s", "kill": "switch2", "restart_after": "1s"},
        {"at": "5s", "flap": "backbone", "times": 2, "down": "1s", "up": "1s"},
        {"at": "1s", "kill": {"machines": 1}, "restart_after": "1s"}]}, "t")
    with pytest.raises(UserError, match=r"gives faults.1 \(backbone-flap\), faults.2 "
                       r"\(machines-restart\), an event of a schedule"):
        get_scenario("failover").check(topology)


def test_failover_refuses_a_fault_more_than_a_minute_after_its_probes() -> None:
    """A schedule's `at` may be late (bound by its load); failover waits it out before
    each fault, so beyond a minute is refused there, naming the entry."""
    late = parse_topology({**BASE, "faults": [
        {"at": "1s", "kill": "switch2", "restart_after": "1s"},
        {"at": "61s", "link": "backbone", "for": "1s"}]}, "t")
    with pytest.raises(UserError, match=r"faults.1 \(at 61s\) is more than 60s after the "
                       "probes answer"):
        get_scenario("failover").check(late)
    get_scenario("failover").check(parse_topology({**BASE, "faults": [
        {"at": "60s", "link": "backbone", "for": "1s"}]}, "t"))


def test_once_a_faults_probe_had_no_answer_the_later_ones_wait_briefly() -> None:
    """A dead path waited FIRST_ANSWER_S for each fault (60 s for three); once one
    fault's probe had no answer, each later one waits FIRST_ANSWER_AGAIN_S; a probe
    that answered keeps the whole wait for the next."""
    from types import SimpleNamespace

    from vnetbench.measure.outage import ProbeTrace, Reply
    from vnetbench.scenarios.failover import (
        FIRST_ANSWER_AGAIN_S,
        FIRST_ANSWER_S,
        Failover,
    )

    topology = parse_topology(BASE, "t")
    answers = {"switch-restart": True, "backbone-down": False, "loss-burst": False}
    waits: list[tuple[str, float]] = []

    class Recorded(Failover):
        def measure(self, context, roles, label, fault, pass_no,  # type: ignore[no-untyped-def]
                    first_answer_s=FIRST_ANSWER_S):
            waits.append((label, first_answer_s))
            replies = [Reply(1, 1.0, 0.1)] if answers[label] else []
            return FaultOutcome(label, fault, remote=ProbeTrace(replies, 1, 1.0))

    context = SimpleNamespace(topology=topology, placement=lambda: {
        a.name: a.switch for a in topology.agents})
    Recorded().run_pass(context, 1)  # type: ignore[arg-type]
    assert waits == [("switch-restart", FIRST_ANSWER_S), ("backbone-down", FIRST_ANSWER_S),
                     ("loss-burst", FIRST_ANSWER_AGAIN_S)]
