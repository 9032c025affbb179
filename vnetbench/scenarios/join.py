"""join: how long until a room of machines that start at once is attached?

The conductor and the switches are up; BENCH_MACHINES agents wait at the
start gate (created, their programs not started) and are released together.
The time runs from the first release to the join event (the overlay's
`join_event`, e.g. vNet's conductor registering the agent) of the last agent
that joined within the bounded wait (which ends sooner once every agent still missing
was refused by a server that says so: Refusals). Beside it: the gate's own spread, how
agents split across switches, and for every agent that did not join, the
reason its own log gives.

Every pass starts fresh programs: by default in the same containers (the entry
wrapper stops them and re-arms the gate: `Stack.restart_programs`), so a pass
costs seconds of testbed instead of a bring-up and a teardown; with
`join_fresh: containers`, a stack per pass. The restarted servers get the time
their overlay asks for after they are ready again (`servers_settle_s`), which a
fresh stack's agents take anyway to start, so both measure the same. Each pass
reads only the log lines, join events and release stamps written after its own
release.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime

import pandas as pd

from vnetbench.core.metrics import SKIPPED
from vnetbench.core.outcome import OK_STATUS, Kind, Outcome, Problem, State, single
from vnetbench.core.schema import MACHINES
from vnetbench.declared.declaration import Values
from vnetbench.declared.join import DECLARATION, JoinSettings
from vnetbench.engines.base import LogStream, Source
from vnetbench.engines.stack import Restarted
from vnetbench.measure.events import in_time_order, lines_of, lookup_events
from vnetbench.model.capabilities import Capability
from vnetbench.model.topology import MAX_AGENT_POOL, Topology
from vnetbench.overlays import Overlay
from vnetbench.runtime.gate import gate_spread, release_stamp
from vnetbench.scenarios.base import (
    PassResult,
    Scenario,
    ScenarioContext,
    build_room,
)
from vnetbench.terminal.ui import waiting

CONTAINERS_TARGET = 40  # pools of agents so that big rooms fit: 40 containers started in ~4 s
POLL_SECONDS = 0.5
WRAPPER_LINES = ("vnetbench-gate", "vnetbench-entry")  # the wrapper's, not the program's
RESTART_WAIT_S = 90.0  # for every program to stop, and the servers' to be ready again
# The wait ends early once every agent still missing is one the servers refused (vNet's
# snapshot: an agent its switch refused does not try again) and has stayed so for
# REFUSED_GRACE_S, time enough for an agent that does try again to join; the servers'
# logs are read for it only after no join came for STALLED_S, at most that often, so
# the reading does not take CPU from agents still joining. Such a pass waited its whole
# 30 s (vNet's 20 agents: 31 s for joins done in 3-5 s).
STALLED_S = 2.0
REFUSED_GRACE_S = 3.0


def pool_size(machines: int, requested: int | None, pools_allowed: bool = True) -> int:
    """Agents per container: as requested, else one each up to 40, then pools;
    always one for overlays whose clients need a namespace each."""
    if not pools_allowed:
        return 1
    if requested:
        return requested
    return min(MAX_AGENT_POOL, max(1, math.ceil(machines / CONTAINERS_TARGET)))


def join_wait(topology: Topology) -> float:
    """The bounded wait: the setting, growing with the room (the seed's 30 s for hundreds)."""
    return topology.settings.of(JoinSettings).wait_s + topology.settings.machines * 0.02


@dataclass(frozen=True)
class JoinOutcome:
    total: int
    joined: dict[str, pd.Timestamp]  # agent -> join time
    switches: Counter[str]
    released_first: float | None
    released_last: float | None
    gate_waiting: int
    reasons: Counter[str]
    settle_s: float  # waiting for a quiet host before the release
    quiet: bool = True  # False: the host stayed busy, the gate opened at the bound
    restarted: Restarted | None = None  # programs started again in place before this pass
    node_skew_ms: float | None = None  # several hosts: the hosts' gates opened, first to last

    @property
    def seconds(self) -> float | None:
        if not self.joined or self.released_first is None:
            return None
        return max(t.timestamp() for t in self.joined.values()) - self.released_first


def joined_agents(frame: pd.DataFrame, topology: Topology) -> pd.DataFrame:
    """One row per agent that joined (first of its join events in frame), with the switch
    it joined. Events logged by the agent itself name it by process; the switch is then
    the topology's placement."""
    frame = frame.copy()
    placed = {a.name: a.switch for a in topology.agents}
    frame["agent"] = [f.get("agent") or p for f, p in zip(frame["fields"], frame["process"],
                                                           strict=True)]
    frame["switch"] = [f.get("switch") or placed.get(a) for f, a in zip(frame["fields"],
                                                                       frame["agent"],
                                                                       strict=True)]
    return frame.drop_duplicates("agent")


def failure_reasons(agent_logs: list[Source], missing: set[str]) -> Counter[str]:
    """Why agents did not join, from the last line each one wrote."""
    last: dict[str, str] = {}
    for source in agent_logs:
        for line in in_time_order(lines_of(source)):
            if line.process in missing and not line.text.startswith(WRAPPER_LINES):
                last[line.process] = line.text
    reasons: Counter[str] = Counter()
    for agent in missing:
        text = last.get(agent)
        reasons[f"log ends: {text}" if text else "no output at all"] += 1
    return reasons


class Join(Scenario):
    declaration = DECLARATION
    fresh_between_passes = "programs (stopped and started again in the same containers)"
    needs = frozenset({Capability.JOIN})

    def fresh_stack_per_pass(self, topology: Topology) -> bool:
        return topology.settings.of(JoinSettings).fresh == "containers"

    def stack_topology(self, topology: Topology, overlay: Overlay) -> Topology:
        """The room: `machines` gated agents of its own (agent1...), on the switches."""
        machines = topology.settings.machines
        pools = Capability.AGENT_POOLS in overlay.capabilities
        pool = self.pool(topology, pools)
        why = (f"{machines} machines (settings.machines, --machines or BENCH_MACHINES) "
               f"on {len(topology.switches)} switch(es), "
               + (f"{pool} per container" if pools else
                  f"one container each ({overlay.name} runs one client per namespace)"))
        return build_room(topology, self.name, why,
                          "Give fewer machines, or more switches.", agents=machines,
                          start_gate=True, agent_pool=pool)

    @staticmethod
    def pool(topology: Topology, pools_allowed: bool) -> int:
        s = topology.settings
        return pool_size(s.machines, s.of(JoinSettings).pool, pools_allowed)

    def settings(self, topology: Topology) -> dict[str, object]:
        """The stack topology's own agent_pool is the pool size that ran."""
        return {MACHINES: topology.settings.machines, "pool": topology.agent_pool,
                "fresh": topology.settings.of(JoinSettings).fresh}

    def run_pass(self, context: ScenarioContext, pass_no: int) -> PassResult:
        if context.overlay.join_event is None:
            reason = f"not applicable: {context.overlay.name} has no join event"
            return PassResult({SKIPPED.name: (None, "")}, {},
                              single(State.NOT_APPLICABLE, Kind.NOT_RUN, reason))
        outcome = self.measure(context, pass_no)
        return result_of(outcome, join_wait(context.topology))

    def measure(self, context: ScenarioContext, pass_no: int) -> JoinOutcome:
        total = len(context.topology.agents)
        stack = context.stack
        assert context.overlay.join_event is not None
        role = context.overlay.join_event[0]
        # the log follower starts first: its start-up costs CPU the release needs
        with stack.log_stream(role, since=datetime.now(UTC)) as stream:
            restarted = self.restart(context, pass_no) if stack.gate_releases else None
            with waiting(f"pass {pass_no}: {total} agents released at once, waiting for "
                         "joins", min(join_wait(context.topology), 1 + total * 0.01)):
                opened = stack.release_gate()
                joined = self.wait_for_joins(context, stream, total, opened.released)
        since = datetime.fromtimestamp(opened.released, UTC)
        agents = stack.logs("agent", since=since)
        spread = gate_spread({s.container: release_stamp(s.text, opened.released)
                              for s in agents})
        missing = {a.name for a in context.topology.agents} - set(joined["agent"])
        refused = context.overlay.why_not_joined(
            lambda role, event: context.events(role, event, since), missing)
        return JoinOutcome(
            total=total,
            joined=dict(zip(joined["agent"], joined["time"], strict=True)),
            switches=Counter(joined["switch"]),
            released_first=spread.first, released_last=spread.last,
            gate_waiting=spread.waiting,
            reasons=failure_reasons(agents, missing - refused.keys()) + Counter(
                refused.values()),
            settle_s=opened.settle_s, quiet=opened.quiet, restarted=restarted,
            node_skew_ms=stack.release_skew_ms)

    @staticmethod
    def restart(context: ScenarioContext, pass_no: int) -> Restarted:
        """Every program of the stack started again, the agents back at the gate, the
        servers in the order and given the time their overlay asks for."""
        overlay = context.overlay
        first = context.topology.switches[0] if overlay.first_switch_first else None
        with waiting(f"pass {pass_no}: programs stopped and started again"):
            return context.stack.restart_programs(RESTART_WAIT_S, overlay.servers_settle_s,
                                                  first)

    def wait_for_joins(self, context: ScenarioContext, stream: LogStream, total: int,
                       released: float) -> pd.DataFrame:
        """Joins as the role's logs report them after the release. The wait reads one
        log stream (no engine call per poll while the agents join); the answer is read
        once more from the logs themselves, so a stream that failed cannot lose a join."""
        assert context.overlay.join_event is not None
        role, event = context.overlay.join_event
        deadline = released + join_wait(context.topology)
        since = datetime.fromtimestamp(released, UTC)

        def joined_from(sources: list[Source] | None = None) -> pd.DataFrame:
            events = (context.events(role, event, since) if sources is None else
                      lookup_events(sources, context.overlay.event_patterns(), role, event))
            return joined_agents(events[events["time"] >= pd.Timestamp(since)],
                                 context.topology)

        refusals = Refusals(context, since)
        while stream.alive and time.time() <= deadline:
            found = joined_from(stream.sources())
            if len(found) >= total or refusals.settled(set(found["agent"])):
                break
            time.sleep(POLL_SECONDS)
        if not stream.alive:  # the follower died: fall back to polling the logs
            while len(joined_from()) < total and time.time() <= deadline:
                time.sleep(POLL_SECONDS)
        return joined_from()


class Refusals:
    """Whether every agent still missing was refused by a server, REFUSED_GRACE_S ago
    or more (the end of a join's wait that can only run out: see STALLED_S)."""

    def __init__(self, context: ScenarioContext, since: datetime) -> None:
        self.context, self.since = context, since
        self.joined: set[str] = set()
        self.changed = self.checked = time.monotonic()
        self.all_refused_at: float | None = None

    def settled(self, joined: set[str]) -> bool:
        now = time.monotonic()
        if joined != self.joined:
            self.joined, self.changed, self.all_refused_at = joined, now, None
        if now - max(self.changed, self.checked) < STALLED_S:
            return self.all_refused_at is not None and now - self.all_refused_at >= (
                REFUSED_GRACE_S)
        self.checked = now
        missing = {a.name for a in self.context.topology.agents} - joined
        refused = self.context.overlay.why_not_joined(
            lambda role, event: self.context.events(role, event, self.since), missing)
        if not missing or not missing <= refused.keys():
            self.all_refused_at = None
        elif self.all_refused_at is None:
            self.all_refused_at = now
        return self.all_refused_at is not None and now - self.all_refused_at >= REFUSED_GRACE_S


def result_of(outcome: JoinOutcome, wait_seconds: float) -> PassResult:
    spread_ms = ((outcome.released_last - outcome.released_first) * 1000
                 if outcome.released_first is not None and outcome.released_last is not None
                 else None)
    joined = len(outcome.joined)
    seconds = outcome.seconds if outcome.seconds is None or outcome.seconds >= 0 else None
    values: Values = {
        "join_seconds": seconds,
        "joined": joined,
        "machines": outcome.total,
        "not_joined": outcome.total - joined,
        "gate_spread_ms": spread_ms,
        "gate_never_released": outcome.gate_waiting,
        **({"gate_node_skew_ms": outcome.node_skew_ms}
           if outcome.node_skew_ms is not None else {}),
        "settle_seconds": outcome.settle_s,
    }
    for switch, count in sorted(outcome.switches.items()):
        values[DECLARATION.series("joined_on", switch=switch)] = count
    if outcome.restarted is not None:
        values["restart_seconds"] = outcome.restarted.seconds
        values["not_restarted"] = len(outcome.restarted.stuck)
    metrics = DECLARATION.emitted(values)
    summary: dict[str, float | int | str | None] = {
        "join_s": round(seconds, 3) if seconds is not None else None,
        "joined": f"{joined}/{outcome.total}",
        "gate_spread_ms": round(spread_ms, 1) if spread_ms is not None else None,
        "split": ",".join(f"{s}:{c}" for s, c in sorted(outcome.switches.items())),
    }
    return PassResult(metrics, summary, join_status(outcome, joined, wait_seconds))


def join_status(outcome: JoinOutcome, joined: int, wait_seconds: float) -> Outcome:
    """PARTIAL when some never joined, never left the gate or did not start again;
    FAILED when no join time was measured (join_unmeasured); what else happened is said."""
    said = Outcome()
    if joined < outcome.total:
        said.state = State.PARTIAL
        reasons = "; ".join(f"{count} x {reason}" for reason, count
                            in outcome.reasons.most_common(4))
        said.add(Kind.PARTIAL, f"partial: {joined} of {outcome.total} joined within "
                 f"{wait_seconds:.0f} s (time is for those that joined); not joined: "
                 f"{reasons}" if joined else f"not joined: {reasons}")
    if outcome.gate_waiting:
        said.add(Kind.PARTIAL, f"{outcome.gate_waiting} container(s) never left the gate",
                 addendum=True)
        said.state = State.PARTIAL
    restarted = outcome.restarted
    if restarted and restarted.stuck:
        said.add(Kind.PARTIAL, f"{len(restarted.stuck)} container(s) did not start their "
                 f"program again in time: {', '.join(restarted.stuck[:5])}", addendum=True)
        said.state = State.PARTIAL
    if restarted and restarted.revived:
        said.add(Kind.NOTE, "started again after their program ended: "
                 f"{', '.join(restarted.revived[:5])}", addendum=True)
    if not outcome.quiet:
        said.add(Kind.NOTE, f"the host stayed busy: the gate opened after "
                 f"{outcome.settle_s:.0f} s without a quiet moment", addendum=True)
    unmeasured = join_unmeasured(outcome, wait_seconds)
    if not unmeasured:
        return said
    # what was said follows the reason, as statuses read before problems were typed:
    # an addendum first still after "ok" ("no release stamp ...; ok; the host ...")
    ok = [Problem(Kind.NOTE, OK_STATUS)] if said.problems and said.problems[0].addendum else []
    return Outcome(State.FAILED, [Problem(Kind.UNMEASURED, unmeasured), *ok, *said.problems])


def join_unmeasured(outcome: JoinOutcome, wait_seconds: float) -> str:
    """Why a pass measured no join time, or '': none joined, no release stamp to time
    from, or a join before the release (the stamps' and the events' clocks disagree)."""
    if not outcome.joined:
        return f"none of {outcome.total} joined within {wait_seconds:.0f} s"
    if outcome.seconds is None:
        return ("no release stamp in the agents' logs: the time from the release to the "
                "joins cannot be measured")
    if outcome.seconds < 0:
        return (f"the last join came {-outcome.seconds:.3f} s before the first release: the "
                "release stamps' and the join events' clocks disagree, so no join time")
    return ""
