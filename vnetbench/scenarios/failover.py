"""failover: how long is an overlay down when a switch, the backbone or its control
plane fails, and how does it come back?

Every fault (the topology's `faults`, else the standard set: the measured agent's
switch killed and started again after 3 s, the backbone down for 3 s, a 50 % loss
burst for 2 s) runs on its own, in turn, on one stack. For each: ping at 10 ms
with arrival stamps (`ping -D -O`) from an agent on another switch and from one on
the same switch to the measured agent, and one TCP stream (iperf3 at 10 Mbit/s,
reported every 0.1 s) to it; once the cross-switch ping answers, the fault's
instant is `at` later. The fault runs as a schedule of one on the executor every
scenario shares (faults/executor.py): a link fault by drop rules put in and taken
out by helpers staged before it, one per backbone edge, each waiting in
vnetbench-at; a kill and its restart as engine calls at their instants; a delay
spike as the backbone re-shaped and shaped back. Every edge stamps its steps where
it acts, and the fault is in effect from the latest edge's applied instant to the
latest lifted (faults/window.py). The probes stop once the cross-switch ping answers
again steadily, or at the window's end (`failover_window_s` after the lift).

Per fault: the outage (last answer before to first after, and the probes lost),
the same-switch probe's, the TCP stream's longest stall and whether the connection
carried bytes again, the fault's measured span beside the declared one, the
recovery after the lift, whether the path never answered again after it, the time
until the agents re-registered (the overlay's join events since the fault; none
where it has none) and the agents that logged no rejoin event, with their last log
lines, and a killed container's own time from its start to ready.
A container killed for good is started again once its window is over, so the
next fault and pass find the stack whole; the session is told the deaths were
the fault's (PassResult.fault_killed).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from vnetbench.core.metrics import SKIPPED
from vnetbench.core.model import duration_text
from vnetbench.core.outcome import Kind, State, single
from vnetbench.declared.failover import (
    DECLARATION,
    FailoverSettings,
)
from vnetbench.engines.base import EngineError
from vnetbench.errors import UserError
from vnetbench.faults.on_stack import FaultSchedule
from vnetbench.faults.schedule import Schedule, Target, expand
from vnetbench.measure.outage import (
    StreamTrace,
    answered_steadily,
    outage_of,
    parse_ping_trace,
    parse_stream_trace,
)
from vnetbench.measure.probe import save_raw, start_probe, stop_probes
from vnetbench.model.capabilities import Capability
from vnetbench.model.topology import CONTROL_PLANE, MAX_FAULT_MS, Fault, Topology
from vnetbench.overlays import Overlay
from vnetbench.runtime import labels
from vnetbench.scenarios.base import (
    PassResult,
    Scenario,
    ScenarioContext,
    build_room,
)
from vnetbench.scenarios.failover_result import PROBE_INTERVAL_S, FaultOutcome, result_of
from vnetbench.terminal.ui import waiting

TCP_MBIT = 10  # a paced stream: its continuity is measured, not the machine's speed
# iperf3's writes: its 128 KiB default is a whole 0.1 s interval at 10 Mbit/s, so a
# write late by a little leaves an interval empty (a stall that is not one); 8 KiB
# puts some 15 writes in each interval
WRITE_BYTES = 8192
IPERF_PORT = 5211
FIRST_ANSWER_S = 20.0  # for the probes to start and the path to answer before a fault
# ...and before each later fault of a pass once one fault's probe had no answer in its
# FIRST_ANSWER_S: the path has had that long already (a dead path, vNet's snapshot,
# waited 20 s for each of its three faults: 63.5 s of the quick matrix's cell)
FIRST_ANSWER_AGAIN_S = 3.0
POLL_S = 0.5
STEADY_S = 1.0  # answered again without a gap for this long: recovered
LATECOMER_AFTER_S = 0.5  # into a kill, the latecomer is restarted
LATECOMER_MIN_KILL_MS = 1500.0  # shorter kills end before the latecomer is back up
READY_WAIT_S = 90.0  # a killed container's start to ready (health checks' start period)
LIFT_SETTLE_S = 0.1  # a helper's lift (an iptables call, a stamp) before it is read
KILL_LEAD_S = 0.05  # from staging to a kill's instant, when `at` has passed
STANDARD_FAULTS = ({"at": "2s", "restart_after": "3s"},
                   {"at": "2s", "link": "backbone", "for": "3s"},
                   {"at": "2s", "loss": "50%", "for": "2s"})


@dataclass(frozen=True)
class Roles:
    target: str  # the measured agent
    remote: str  # on another switch
    local: str  # on the target's switch
    switch: str  # the target's


def pick_roles(topology: Topology, placement: dict[str, str]) -> Roles:
    """The measured agent and its same-switch neighbour on the last switch that has two
    agents, the remote prober on another."""
    for switch in reversed(topology.switches):
        here = [a.name for a in topology.agents if placement.get(a.name) == switch]
        away = [a.name for a in topology.agents if placement.get(a.name) not in (switch, None)]
        if len(here) >= 2 and away:
            return Roles(here[0], away[0], here[1], switch)
    raise UserError(f"The failover scenario needs two agents on one switch and one on "
                    f"another; topology '{topology.name}' has no such placement. Give it two "
                    "switches and four agents.")


def pick_latecomer(context: ScenarioContext, roles: Roles, fault: Fault) -> str | None:
    """The machine a kill restarts: none without join events (nothing to time) or for
    a link fault; else an agent that is no probe's end, on the killed switch if one is."""
    if fault.kill is None or context.overlay.join_event is None or (
            fault.restart_after is not None and fault.restart_after < LATECOMER_MIN_KILL_MS):
        return None
    placement = context.placement()
    spare = [a for a in placement if a not in (roles.target, roles.remote, roles.local)]
    on_killed = [a for a in spare if placement[a] == fault.kill]
    return next(iter(on_killed or spare), None)


def faults_of(topology: Topology, switch: str) -> list[Fault]:
    """The topology's faults, else the standard set (the measured agent's switch)."""
    if topology.faults:
        return list(topology.faults)
    return [Fault.model_validate({**f, "kill": switch} if "restart_after" in f else f)
            for f in STANDARD_FAULTS]


def labelled(faults: list[Fault]) -> list[tuple[str, Fault]]:
    """Each fault's name in metric names: its kind, numbered when it repeats."""
    seen: dict[str, int] = {}
    named = []
    for fault in faults:
        seen[fault.kind] = seen.get(fault.kind, 0) + 1
        named.append((fault.kind if seen[fault.kind] == 1 else
                      f"{fault.kind}-{seen[fault.kind]}", fault))
    return named


def lost_probes(loss_percent: float, duration_ms: float) -> float:
    """The probes a loss burst drops on average (probes PROBE_INTERVAL_S apart)."""
    return loss_percent / 100 * duration_ms / (PROBE_INTERVAL_S * 1000)


class Failover(Scenario):
    declaration = DECLARATION
    injects_faults = True
    fresh_between_passes = "nothing (each fault undone, and its window over, before the next)"

    @classmethod
    def needs_for(cls, topology: Topology | None = None) -> frozenset[Capability]:
        needs = super().needs_for(topology)
        if topology and any(f.kill == CONTROL_PLANE for f in topology.faults):
            needs |= {Capability.CONTROL_PLANE}
        return needs

    def stack_topology(self, topology: Topology, overlay: Overlay) -> Topology:
        """Two agents per switch (the probes' ends), three where the overlay has join
        events: the third is the latecomer a kill restarts (a new join meanwhile)."""
        per_switch = 3 if overlay.join_event else 2
        agents = max(len(topology.agents), per_switch * len(topology.switches))
        if agents == len(topology.agents):
            return topology
        return build_room(topology, self.name, f"{agents} agents ({per_switch} per switch)",
                          "Give fewer agents or more switches.", agents=agents)

    def check(self, topology: Topology) -> None:
        if len(topology.switches) < 2:
            raise UserError(f"The failover scenario needs two switches; topology "
                            f"'{topology.name}' has {len(topology.switches)}.")
        scheduled = [f"faults.{i} ({f.kind})" for i, f in enumerate(topology.faults)
                     if f.scheduled_only]
        if scheduled:
            raise UserError(
                f"The failover scenario injects one fault at a time under its probes: a "
                f"switch or the control plane killed, the backbone down, a loss burst or a "
                f"delay spike. Topology '{topology.name}' gives {', '.join(scheduled)}, an "
                "event of a schedule of faults (a flap, a partition, a ramp, churn, a kill "
                "of the room's server or machines), which failover does not run. Drop "
                "those entries for failover.")
        late = [f"faults.{i} (at {duration_text(f.at)})" for i, f in enumerate(topology.faults)
                if f.at > MAX_FAULT_MS]
        if late:
            raise UserError(
                f"Topology '{topology.name}': {', '.join(late)} is more than "
                f"{duration_text(MAX_FAULT_MS)} after the probes answer: failover waits `at` "
                "before each fault, so one pass would be minutes long. Give at most "
                f"{duration_text(MAX_FAULT_MS)} (a schedule of faults under the room's load "
                "takes a later `at`).")
        unseen = [f"faults.{i} ({f.describe()})" for i, f in enumerate(topology.faults)
                  if f.loss is not None and f.duration is not None
                  and lost_probes(f.loss, f.duration) < 1]
        if unseen:
            raise UserError(
                f"Topology '{topology.name}': {', '.join(unseen)} would most likely lose no "
                f"probe: failover pings every {PROBE_INTERVAL_S * 1000:g} ms, so a loss "
                "burst of p % for t ms loses p/100 x t/10 probes on average, under one "
                "here, and no outage would be measured. Give a higher loss or a longer "
                "'for' (e.g. loss: 100%, for: 2s).")
        super().check(topology)

    def settings(self, topology: Topology) -> dict[str, object]:
        faults = topology.faults or faults_of(topology, "<measured switch>")
        return {"faults": "; ".join(f.describe() for f in faults),
                "window_s": topology.settings.of(FailoverSettings).window_s}

    def run_pass(self, context: ScenarioContext, pass_no: int) -> PassResult:
        if any(f.kill == CONTROL_PLANE for f in context.topology.faults) and \
                context.overlay.control_plane is None:  # the session decides this first
            return PassResult({SKIPPED.name: (None, "")}, {},
                              single(State.NOT_APPLICABLE, Kind.NOT_RUN, "not applicable"))
        roles = pick_roles(context.topology, context.placement())
        outcomes: list[FaultOutcome] = []
        for label, fault in labelled(faults_of(context.topology, roles.switch)):
            unanswered = any(o.remote is not None and not o.remote.replies for o in outcomes)
            outcomes.append(self.measure(context, roles, label, fault, pass_no,
                                         FIRST_ANSWER_AGAIN_S if unanswered
                                         else FIRST_ANSWER_S))
        return result_of(outcomes)

    # -- one fault ----------------------------------------------------------------
    def measure(self, context: ScenarioContext, roles: Roles, label: str, fault: Fault,
                pass_no: int, first_answer_s: float = FIRST_ANSWER_S) -> FaultOutcome:
        stack, topology = context.stack, context.topology
        window = topology.settings.of(FailoverSettings).window_s
        outcome = FaultOutcome(label, fault, window_s=window)
        address = context.overlay.target_address(topology, context.plan, roles.target)
        lasts = (fault.lasts_ms or 0) / 1000
        bound = fault.at / 1000 + lasts + window + FIRST_ANSWER_S
        prefix = f"{stack.rendered.project}-failover-{pass_no}-{label}"
        # bounded by timeout(1), not ping's -w: with a deadline, ping ends at the first
        # ICMP error ("Destination Net Unreachable" from tinc's hub, seen), mid-outage
        ping = ["timeout", str(int(bound) + 5), "stdbuf", "-oL", "ping", "-D", "-O", "-n",
                "-i", f"{PROBE_INTERVAL_S:g}", "-W", "1", address]
        names = {"server": f"{prefix}-server", "remote": f"{prefix}-remote",
                 "local": f"{prefix}-local", "stream": f"{prefix}-stream"}
        try:
            start_probe(stack, context.container(roles.target),
                        ["iperf3", "-s", "-1", "-p", str(IPERF_PORT)], names["server"])
            # kept when they end (a probe whose namespace went with a killed container),
            # so their logs can still be read; removed below
            start_probe(stack, context.container(roles.remote), ping, names["remote"],
                        remove=False)
            start_probe(stack, context.container(roles.local), ping, names["local"],
                        remove=False)
            time.sleep(0.5)  # the server listens
            start_probe(stack, context.container(roles.remote),
                        ["stdbuf", "-oL", "iperf3", "-c", address, "-p", str(IPERF_PORT),
                         "-t", str(int(bound) + 5), "-i", "0.1", "--forceflush", "-b",
                         f"{TCP_MBIT}M", "-l", f"{WRITE_BYTES}"], names["stream"],
                        remove=False)
            with waiting(f"pass {pass_no}, {label}: {fault.describe()} ({roles.remote} and "
                         f"{roles.local} probe {roles.target})", fault.at / 1000 + lasts + 3):
                self.inject(context, outcome, names["remote"], roles, prefix,
                            context.raw_dir / f"failover-pass{pass_no}-{label}-",
                            first_answer_s)
                self.wait_recovered(context, outcome, names["remote"], names["stream"],
                                    window)
        finally:
            for kind in ("remote", "local", "stream"):
                text = probe_log(context, names[kind])
                save_raw(context.raw_dir / f"failover-pass{pass_no}-{label}-{kind}.txt", text)
                if kind == "stream":
                    outcome.stream = parse_stream_trace(text)
                else:
                    setattr(outcome, kind, parse_ping_trace(text))
            stop_probes(stack, list(names.values()))
            self.restore(context, outcome)
        self.latecomer_join(context, outcome)  # first: its wait lets rejoins see it
        self.rejoins(context, outcome, roles)
        return outcome


    def inject(self, context: ScenarioContext, outcome: FaultOutcome, remote: str,
               roles: Roles, prefix: str, raw: Path,
               first_answer_s: float = FIRST_ANSWER_S) -> None:
        """Once the remote probe answers: the fault `at` later, run by the one executor
        of schedules (faults/executor.py) as a schedule of this one fault, each edge's
        instants stamped (outcome.window); a kill for good is left down for its window
        (restore() starts it again)."""
        fault = outcome.fault
        deadline = time.time() + first_answer_s
        while not parse_ping_trace(probe_log(context, remote)).replies:
            if time.time() > deadline:
                again = (" (an earlier fault's probe had none either)"
                         if first_answer_s < FIRST_ANSWER_S else "")
                outcome.problems.append(f"{roles.remote}'s probe had no answer from "
                                        f"{roles.target} within {first_answer_s:.0f} s"
                                        f"{again}: nothing to measure the fault against")
                return
            time.sleep(0.2)
        schedule = expand(context.topology.model_copy(update={"faults": [fault]}), [])
        run = FailoverSchedule(context, schedule, prefix, raw, self.wait_ready)
        # `at` counts from the first answer; never sooner than staging allows
        at_s = fault.at / 1000
        run.stage_at(max(time.time(), time.time() + run.lead_s + KILL_LEAD_S - at_s))
        try:
            run.fire()
            if fault.kill is not None:
                wait_until(run.zero + at_s)
                self.restart_latecomer(context, outcome, roles)
            wait_until(run.zero + schedule.end_ms / 1000 + LIFT_SETTLE_S)
        except BaseException:
            run.cancel()
            raise
        done = run.finish(start_killed=False)
        event = schedule.events[0]
        outcome.window = done.windows[event.label]
        outcome.problems += [p.removeprefix(f"{event.label}: ") for p in done.problems]
        outcome.notes += [n.removeprefix(f"{event.label}: ") for n in done.notes]
        outcome.killed = sorted(run.killed)
        lift = outcome.window.edges[-1].lift if outcome.window.edges else None
        if run.ready_at and lift is not None:  # a restart: asked to every target ready
            outcome.ready_s = max(run.ready_at.values()) - lift.began

    def restart_latecomer(self, context: ScenarioContext, outcome: FaultOutcome,
                          roles: Roles) -> float:
        """A kill with join events: LATECOMER_AFTER_S into it, one machine that is no
        probe's end (on the killed switch when it has one) is killed and started again,
        as a machine rebooted mid-outage; the seconds this took."""
        begun = time.time()
        agent = pick_latecomer(context, roles, outcome.fault)
        if agent is None:
            return 0.0
        time.sleep(LATECOMER_AFTER_S)
        name = context.container(agent)
        context.stack.engine.signal([name], "KILL")
        outcome.latecomer, outcome.latecomer_started_at = agent, time.time()
        outcome.latecomer_service = context.stack.service_of(name)
        context.stack.engine.restart(name)
        return time.time() - begun

    def latecomer_join(self, context: ScenarioContext, outcome: FaultOutcome) -> None:
        """The latecomer's first join event after its restart, waited for (bounded by
        the window after the fault ended); whether it came before the role was back."""
        join, started = context.overlay.join_event, outcome.latecomer_started_at
        if join is None or started is None or outcome.latecomer is None:
            return
        deadline = (outcome.effective_end or outcome.effective_start or started) + outcome.window_s
        since = datetime.fromtimestamp(started, UTC)
        self.reshaped_after_restart(context, [context.container(outcome.latecomer)])
        while True:
            frame = context.events(*join, since=since)
            moments = [at.timestamp() for fields, process, at in zip(
                frame["fields"], frame["process"], frame["time"], strict=True)
                if str(fields.get("agent") or process) == outcome.latecomer
                and at.timestamp() > started]
            if moments:
                outcome.late_join_s = min(moments) - started
                # against the restart asked, not its stamp: the latecomer may reach a
                # hub through the role's namespace before the engine says it started
                outcome.late_joined_during = (outcome.lift_asked is None
                                              or min(moments) < outcome.lift_asked)
                return
            if time.time() >= deadline:
                lines = context.last_log_lines().get(outcome.latecomer, [])
                outcome.problems.append(
                    f"{outcome.latecomer}, restarted {LATECOMER_AFTER_S:g} s into the fault, "
                    f"did not join within the window (its log ends: "
                    f"{' | '.join(lines) or 'nothing'})")
                return
            time.sleep(POLL_S)

    @staticmethod
    def kill_targets(context: ScenarioContext, fault: Fault) -> list[str]:
        if fault.kill == CONTROL_PLANE:
            role = context.overlay.control_plane
            listed = context.stack.containers(role) if role else []
        else:
            listed = [c for c in context.stack.containers("switch")
                      if c.labels.get(labels.NODE) == fault.kill]
        if not listed:
            raise UserError(f"failover: no running container is {fault.kill} on "
                            f"{context.overlay.name}; nothing to kill.")
        return [c.name for c in listed]

    def start_again(self, context: ScenarioContext, names: list[str]) -> float | None:
        """Start the killed containers; seconds until all are ready (None: not in time)."""
        started = time.time()
        for name in names:
            context.stack.engine.restart(name)
        return self.wait_ready(context, names, started)

    def wait_ready(self, context: ScenarioContext, names: list[str],
                   started: float) -> float | None:
        """Seconds from `started` (their start asked) until all are ready (None: not
        within READY_WAIT_S)."""
        deadline = started + READY_WAIT_S
        while time.time() < deadline:
            listed = [c for c in context.stack.containers() if c.name in names]
            if listed and all(context.stack.state_of(c) == "ready" for c in listed):
                ready = time.time() - started
                self.reshaped_after_restart(context, names)
                return ready
            time.sleep(0.2)
        return None

    @staticmethod
    def reshaped_after_restart(context: ScenarioContext, names: list[str]) -> None:
        """A shaped stack: the keeper shapes a restarted container again; once it has,
        it is told the new shapers are the planned ones (not a change to report)."""
        if context.shaping is not None:
            context.shaping.settle({context.stack.service_of(n) for n in names})

    def wait_recovered(self, context: ScenarioContext, outcome: FaultOutcome, remote: str,
                       stream: str, window: float) -> None:
        """Until the remote probe answers steadily after the fault and the TCP stream
        moves bytes again (or iperf3 gave up), at most `window` after the fault ended
        (a kill for good: after it was injected)."""
        start = outcome.effective_start
        if start is None:
            return
        since = outcome.effective_end or start
        deadline = since + window
        while time.time() < deadline:
            trace = parse_ping_trace(probe_log(context, remote))
            found = outage_of(trace, start, PROBE_INTERVAL_S)
            back = (found is not None and found.after is not None and trace.replies
                    and found.after.at > since - 1
                    and trace.replies[-1].at - found.after.at >= STEADY_S)
            if ((back or answered_steadily(trace, since, STEADY_S)) and trace.replies
                    and (trace.last_at or 0) - trace.replies[-1].at < 3 * PROBE_INTERVAL_S
                    and flowing(parse_stream_trace(probe_log(context, stream)))):
                return
            time.sleep(POLL_S)

    def restore(self, context: ScenarioContext, outcome: FaultOutcome) -> None:
        """A kill for good: started again after its window, for the next fault."""
        fault = outcome.fault
        if fault.kill is not None and fault.restart_after is None and outcome.killed:
            names = [context.stack.container(s) for s in outcome.killed]
            if self.start_again(context, names) is None:
                outcome.problems.append(f"{', '.join(outcome.killed)} did not become ready "
                                        f"again within {READY_WAIT_S:.0f} s after the window")
            else:
                time.sleep(2)  # its tunnels up again before the next fault's probes

    def rejoins(self, context: ScenarioContext, outcome: FaultOutcome, roles: Roles) -> None:
        """The agents' join events since the fault: the killed switch's agents (all, for
        the control plane); none expected of a link fault."""
        fault, join = outcome.fault, context.overlay.join_event
        start = outcome.effective_start
        if fault.kill is None or join is None or start is None:
            return
        placement = context.placement()
        expected = sorted(a for a, s in placement.items()
                          if fault.kill == CONTROL_PLANE or s == fault.kill)
        since = datetime.fromtimestamp(start, UTC)
        frame = context.events(*join, since=since)
        times: dict[str, float] = {}
        for fields, process, at in zip(frame["fields"], frame["process"], frame["time"],
                                       strict=True):
            agent = str(fields.get("agent") or process)
            moment = at.timestamp()
            if agent in expected and moment > start:
                times.setdefault(agent, moment)
        outcome.expected_rejoins = len(expected)
        outcome.rejoined = len(times)
        if times and len(times) == len(expected):
            outcome.rejoin_s = max(times.values()) - start
        missing = [a for a in expected if a not in times]
        if missing:
            lines = context.last_log_lines()
            outcome.no_rejoin_event = {a: lines.get(a, []) for a in missing}


class FailoverSchedule(FaultSchedule):
    """One fault's schedule on failover's stack: a target started again is waited for
    until ready (`wait_ready`), the instant it was kept (ready_at)."""

    def __init__(self, context: ScenarioContext, schedule: Schedule, prefix: str,
                 raw: Path, wait_ready: Callable[[ScenarioContext, list[str], float],
                                                 float | None]) -> None:
        super().__init__(context, schedule, prefix, raw)
        self.scenario_context, self.wait_ready = context, wait_ready
        self.names: dict[Target, list[str]] = {}
        self.ready_at: dict[Target, float] = {}

    def containers(self, target: Target) -> list[str]:
        self.names[target] = super().containers(target)
        return self.names[target]

    def started(self, target: Target, at: float) -> None:
        ready = self.wait_ready(self.scenario_context, self.names.get(target, []), at)
        if ready is not None:
            self.ready_at[target] = at + ready


def wait_until(instant: float) -> None:
    time.sleep(max(0.0, instant - time.time()))


def flowing(stream: StreamTrace) -> bool:
    """The stream's last three intervals moved bytes, or it ended (an error, or no
    report)."""
    return bool(stream.error or not stream.intervals
                or all(moved > 0 for _, _, moved in stream.intervals[-3:]))


def probe_log(context: ScenarioContext, name: str) -> str:
    """A probe's log so far; empty when the engine has no such container (never
    started, or removed)."""
    try:
        return context.stack.engine.logs(name)
    except EngineError:
        return ""
