"""A schedule of faults (faults/schedule.py) run on a stack during a load: staged
before the load, each step fired at its instant, stamped where it acted.

Drop rules (a link down, a loss burst, a flap, a partition) wait where they act: one
helper per backbone attachment (the tools image, in that container's namespace,
NET_ADMIN, as faults/edges.py's) is started before the load with every rule step of
its edge. It stages an empty chain of its own and a jump to it first in raw
PREROUTING for its interface; then each step waits in vnetbench-at for its instant
and makes one iptables call, appending its rule to the chain or flushing the chain
(a lift that matches nothing: measured, deleting a partition's rule by its match
took 40-145 ms under a room of 50, an append 5-10 ms), and the helper stamps the
instant iptables returned. Steps on one edge run one after the other, so a step
whose predecessor overran its instant begins late, and its stamp says by how much.
The helper takes its chain out when its last step is done; one that did not is
cleared after the load.

Engine steps (a kill, a start, the backbone shaped anew) cannot wait inside a
container: this process fires them, each at its instant, stamped with the call's
span (began to returned): kills and starts dispatched to a few workers at once (one
target's steps in the schedule's order: a churned machine's start after its kill),
shaping on a thread of its own, so a slow re-shaping delays no kill. Shaping
anew replaces the shaper of every container on the backbone, over a second each on
a 2-core host: a ramp's levels are as late as their stamps say, and a step that
began over ENGINE_LATE_S late is the pass's problem. A step whose instant is more
than LIFT_WAIT_S past when the schedule should have ended is not run at all: the
load is over. `finish` waits for both threads, so nothing the schedule starts
outlives it (teardown finds it all).

Each event's window (faults/window.py): per edge, its first step's stamp
(apply) and its last (lift); in effect from the latest edge's first stamp to the
latest edge's last one.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from vnetbench.engines.base import EngineError, RunOnEngine, ToolSpec
from vnetbench.faults.edges import (
    CAPABILITIES,
    MARK,
    STAGERS,
    Edge,
    backbone_edges,
    helper_labels,
    helper_log,
    staging_lead_s,
)
from vnetbench.faults.schedule import (
    Action,
    BackboneShape,
    Cut,
    Event,
    Schedule,
    Step,
    Target,
)
from vnetbench.faults.window import EdgeStamps, FaultWindow, Stamp
from vnetbench.measure.probe import AT_MARK, Began, save_raw, split_began
from vnetbench.model.addressing import AddressPlan

NONE = "-"  # an empty field of a rule step's line
DROPS = (Action.DROP_ON, Action.DROP_OFF, Action.DROP_SET)
OPS = {Action.DROP_ON: "on", Action.DROP_OFF: "off", Action.DROP_SET: "set"}
LIFECYCLE = (Action.KILL, Action.START)
SHAPING = (Action.SHAPE, Action.RESTORE)
ENGINE_ACTIONS = LIFECYCLE + SHAPING
LIFT_WAIT_S = 10.0  # after the last step's instant: every helper has stamped it
# kills and starts under way at once: a churn of 10 machines over 5 s restarts one
# every 0.5 s, and restarting a WireGuard machine took the engine over a second here.
# Measured on WireGuard's room of 50: with 4, 6 of the churn's steps began up to 0.8 s
# late (1 run); with 8, none over 0.5 s (2 runs)
LIFECYCLE_WORKERS = 8
# an engine step this late ran behind the schedule (a kill's call takes about 0.1 s here)
ENGINE_LATE_S = 0.5

# A helper is the tools image's vnetbench-fault (images/tools/vnetbench-fault): `stage
# ADDRESS STEPS` stages an empty chain of its own jumped to first from raw PREROUTING,
# then runs its steps, one a line "STEP AT on|off|set PROBABILITY SOURCES", each at its
# instant in vnetbench-at: "on" appends its rule, "set" (a loss ramp's next level)
# flushes the chain and appends the level's, "off" flushes it (events on the
# backbone's drop rules never overlap: model/faults/checks.py), a lift as prompt as an
# apply; `clear ADDRESS` takes out the chain of a helper that did not end its own way.
HELPER = "vnetbench-fault"

DONE = MARK + "done"
STEP_STAMP = re.compile(r"^vnetbench-fault: step=(?P<step>\d+) at=(?P<at>\d+(\.\d+)?)")
FAILED_STEP = re.compile(r"^vnetbench-fault: failed( step=(?P<step>\d+))? ?(?P<why>.*)")


@dataclass(frozen=True)
class RuleStep:
    """One drop rule step of one edge: the schedule's step index, its instant (epoch),
    in or out, and the rule's match."""

    index: int
    at: float
    op: str  # "on": the rule appended; "off": the chain flushed; "set": both, at once
    probability: str  # NONE: every packet
    sources: str  # NONE: whatever arrives

    @property
    def line(self) -> str:
        return (f"{self.index} {self.at:.6f} {self.op} "
                f"{self.probability} {self.sources}")


def probability_of(share: float | None) -> str:
    """iptables statistic's probability for a share dropped (NONE: all of it)."""
    if share is None or share >= 100:
        return NONE
    return f"{share / 100:.6f}"


def sources_of(plan: AddressPlan, cut: Cut) -> str:
    """A partition's cut: what arrives from the peer switch (its backbone address and
    its site's subnet); NONE: the link's, everything."""
    if cut.source is None:
        return NONE
    return f"{plan.switch_backbone[cut.source]},{plan.sites[cut.source].subnet}"


def switch_of(node: str) -> str:
    """The switch a backbone container belongs to (a router or hub of it: its node
    prefixed so)."""
    return node.removeprefix("router-").removeprefix("hub-")


def rule_steps(schedule: Schedule, edges: Sequence[Edge], plan: AddressPlan,
               zero: float) -> dict[str, list[RuleStep]]:
    """Each edge's rule steps (by helper name), in the schedule's order; an edge with
    none is left out. A cut at one switch acts on its own edges only; a step's cuts on
    one edge (a partition's peers) are one rule, their sources in one list: one
    iptables call puts them all in at once."""
    own: dict[str, list[RuleStep]] = {}
    share_of: dict[str, float | None] = {}  # an event's share, from its drop-edges-on
    for index, step in enumerate(schedule.steps):
        if step.action not in DROPS:
            continue
        op = OPS[step.action]
        if op != "off":
            share_of[step.event] = step.drop_percent
        for edge in edges:
            cuts = [c for c in step.cuts if c.at is None or switch_of(edge.node) == c.at]
            if not cuts:
                continue
            sources = [sources_of(plan, c) for c in cuts]
            own.setdefault(edge.helper, []).append(RuleStep(
                index, zero + step.at_ms / 1000, op, probability_of(share_of.get(step.event)),
                NONE if NONE in sources else ",".join(sources)))
    return own


def parse_edge_helper(text: str) -> tuple[dict[int, Stamp], str | None]:
    """A schedule helper's stamps by step index, and its failure (its own words)."""
    stamps: dict[int, Stamp] = {}
    began: Began | None = None
    failure = None
    for line in text.splitlines():
        line = line.strip()
        if line.startswith(AT_MARK):
            began, _ = split_began(line + "\n")
        elif found := STEP_STAMP.match(line):
            if began is not None:
                stamps[int(found["step"])] = Stamp(began.at, began.late_s, float(found["at"]),
                                                   began.waited_s)
            began = None
        elif failed := FAILED_STEP.match(line):
            failure = failed["why"].strip() or "it failed"
            if failed["step"]:
                failure = f"step {failed['step']}: {failure}"
    if failure is None and not stamps:
        failure = "it printed no stamp (never started, or its output is lost)"
    return stamps, failure


@dataclass
class ScheduleRun:
    """The schedule's stamps as it ran: each helper's rule steps (indexes into the
    schedule's steps) and stamps, the engine steps' stamps, and why a step or a helper
    did not run."""

    planned: dict[str, list[int]] = field(default_factory=dict)  # helper -> its steps
    rules: dict[str, dict[int, Stamp]] = field(default_factory=dict)
    engine: dict[int, Stamp] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)  # helper or "step N" -> why

    def window(self, schedule: Schedule, event: Event) -> FaultWindow:
        """The event's edges: each helper with a step of it, and the engine."""
        own = [i for i, s in enumerate(schedule.steps) if s.event == event.label]
        lifts = event.end_ms is not None
        edges = []
        for helper, indexes in sorted(self.planned.items()):
            mine = [i for i in indexes if i in own]
            if mine:
                stamps = self.rules.get(helper, {})
                edges.append(edge_stamps(helper, [stamps[i] for i in mine if i in stamps],
                                         lifts, self.failures.get(helper), len(mine)))
        engine = [i for i in own if schedule.steps[i].action in ENGINE_ACTIONS]
        if engine:
            missed = [self.failures[f"step {i}"] for i in engine if f"step {i}" in self.failures]
            edges.append(edge_stamps(f"engine ({event.fault.describe()})",
                                     [self.engine[i] for i in engine if i in self.engine],
                                     lifts, missed[0] if missed else None, len(engine)))
        return FaultWindow(tuple(edges), event.fault.lasts_ms)

    def late_engine_steps(self, schedule: Schedule, event: Event) -> list[float]:
        """How late each of the event's engine steps began, of those over ENGINE_LATE_S."""
        return [stamp.late_s for i, s in enumerate(schedule.steps)
                if s.event == event.label and (stamp := self.engine.get(i)) is not None
                and stamp.late_s > ENGINE_LATE_S]


def edge_stamps(edge: str, stamps: list[Stamp], lifts: bool, failure: str | None,
                expected: int) -> EdgeStamps:
    """One edge's apply (its first stamp) and lift (its last, when the event is lifted
    and every step of it on this edge was stamped)."""
    complete = len(stamps) == expected
    lift = stamps[-1] if lifts and len(stamps) > 1 and complete else None
    if not complete and failure is None:
        failure = f"{expected - len(stamps)} of its {expected} steps were not stamped"
    return EdgeStamps(edge, stamps[0] if stamps else None, lift, failure)


class ScheduleRunner:
    """Stages a schedule's rule steps, fires its engine steps, reads every stamp.

    `containers` names the containers a target is; `reshape` shapes the backbone with a
    profile (None: as planned); `started` is told of each target started again with
    the instant its start returned (a room starts the probes it held there anew);
    `raw`: where each helper's output is kept, its name's prefix (raw/room-pass1-)."""

    def __init__(self, run: RunOnEngine, schedule: Schedule, plan: AddressPlan,
                 prefix: str, containers: Callable[[Target], list[str]],
                 reshape: Callable[[BackboneShape | None], None],
                 started: Callable[[Target, float], None],
                 raw: Path | None = None) -> None:
        self.run, self.schedule, self.plan, self.raw = run, schedule, plan, raw
        self.containers, self.reshape, self.started = containers, reshape, started
        needs_edges = any(s.action in DROPS
                          for s in schedule.steps)
        self.prefix = f"{prefix}-"
        self.edges = backbone_edges(run, f"{prefix}-schedule") if needs_edges else []
        self.stamps = ScheduleRun()
        self.own: dict[str, list[RuleStep]] = {}
        self.threads: list[threading.Thread] = []
        self.workers = ThreadPoolExecutor(LIFECYCLE_WORKERS)
        self.after = ThreadPoolExecutor(LIFECYCLE_WORKERS)  # probes of started targets
        self.returned: dict[Target, float] = {}  # a target's last step returned
        self.dispatched: list[Future[None]] = []
        self.stopping = threading.Event()  # no step begins once set
        self.stop_reason = "the steps before it ran past the schedule's end"
        self.cancelled = False
        self.killed: dict[Target, list[str]] = {}  # killed and not started again
        self.zero = 0.0

    @property
    def lead_s(self) -> float:
        """How long before its zero staging must begin."""
        return staging_lead_s(len(self.edges)) if self.edges else 0.0

    def stage(self, zero: float) -> None:
        """Every edge's helper started, waiting for its first step (STAGERS at once)."""
        self.zero = zero
        self.own = rule_steps(self.schedule, self.edges, self.plan, zero)
        self.stamps.planned = {helper: [s.index for s in steps]
                               for helper, steps in self.own.items()}
        edges = [e for e in self.edges if e.helper in self.own]

        def start(edge: Edge) -> tuple[str, str | None]:
            lines = "\n".join(s.line for s in self.own[edge.helper])
            try:
                self.run.engine.start_tool(edge.container, ToolSpec(
                    (HELPER, "stage", edge.address, lines),
                    helper_labels(self.run, edge), name=edge.helper, keep=True,
                    capabilities=CAPABILITIES))
            except EngineError as error:
                return edge.helper, f"the engine did not start it: {str(error).strip()[-300:]}"
            return edge.helper, None

        with ThreadPoolExecutor(STAGERS) as stagers:
            for helper, why in stagers.map(start, edges):
                if why:
                    self.stamps.failures[helper] = why

    def fire(self) -> None:
        """The engine steps from now on: kills and starts dispatched at their instants
        to LIFECYCLE_WORKERS at once (one target's steps in order), shaping on a thread
        of its own, one step after the other."""
        self.threads = [threading.Thread(target=self._dispatch, daemon=True),
                        threading.Thread(target=self._shape, daemon=True)]
        for thread in self.threads:
            thread.start()

    def _due(self, kinds: tuple[Action, ...]) -> Iterator[tuple[int, Step, float]]:
        """The steps of `kinds`, each at its instant; one past the schedule's end is
        said and skipped."""
        for index, step in enumerate(self.schedule.steps):
            if step.action not in kinds:
                continue
            instant = self.zero + step.at_ms / 1000
            if self.stopping.wait(max(0.0, instant - time.time())):
                self.stamps.failures[f"step {index}"] = (
                    f"{step.action} at {step.at_ms:g} ms was not run: {self.stop_reason}")
                continue
            yield index, step, instant

    def _dispatch(self) -> None:
        last: dict[Target, Future[None]] = {}
        for index, step, instant in self._due(LIFECYCLE):
            before = {last[t] for t in step.targets if t in last}
            done = self._after(before, partial(self._lifecycle, index, step, instant))
            last |= dict.fromkeys(step.targets, done)
            self.dispatched.append(done)

    def _after(self, before: set[Future[None]], call: Callable[[], None]) -> Future[None]:
        """`call` on a worker once every future of `before` is done (at once when none):
        a step waiting for its target's previous one holds no worker meanwhile."""
        result: Future[None] = Future()
        pending = [len(before)]
        lock = threading.Lock()

        def run() -> None:
            inner = self.workers.submit(call)
            inner.add_done_callback(lambda _: result.set_result(None))

        def one_done(_: Future[None]) -> None:
            with lock:
                pending[0] -= 1
                ready = pending[0] == 0
            if ready:
                run()

        if not before:
            run()
        for future in before:
            future.add_done_callback(one_done)
        return result

    def _shape(self) -> None:
        """Each shaping step at its instant, but no sooner after its event's previous one
        took effect than declared: re-shaping takes its time (a shaper per container,
        1.5 s for two here), and a spike's lift at its bare instant would cut its span
        short or find the apply still under way."""
        previous: dict[str, tuple[float, float]] = {}  # event: its last step's at_ms, done
        for index, step, instant in self._due(SHAPING):
            if step.event in previous:
                at_ms, done = previous[step.event]
                held = done + (step.at_ms - at_ms) / 1000
                if held > instant and self.stopping.wait(max(0.0, held - time.time())):
                    self.stamps.failures[f"step {index}"] = (
                        f"{step.action} at {step.at_ms:g} ms was not run: {self.stop_reason}")
                    continue
                instant = max(instant, held)
            shape = step.shape if step.action is Action.SHAPE else None
            if self._stamped(index, step, instant, partial(self.reshape, shape)):
                done = self.stamps.engine[index].done or time.time()
                previous[step.event] = (step.at_ms, done)

    def _lifecycle(self, index: int, step: Step, instant: float) -> None:
        if self.cancelled:
            return
        # a step due at once after another of its target (churn's start after its kill)
        # is late from when that one returned, not from their shared instant
        ready = max([instant, *(self.returned.get(t, instant) for t in step.targets)])
        if step.action is Action.KILL:
            self._stamped(index, step, ready, lambda: self._kill(step.targets))
        elif self._stamped(index, step, ready, lambda: self._start(step.targets)):
            for target in step.targets:  # its probes anew, off the engine's workers
                self.after.submit(self._announce, index, target)
        for target in step.targets:
            self.returned[target] = time.time()

    def _announce(self, index: int, target: Target) -> None:
        if self.cancelled:
            return
        try:
            self.started(target, time.time())
        except Exception as error:  # any: said, and the rest still run
            self.stamps.failures[f"step {index}"] = (
                f"after starting {target.name}: {str(error).strip()[-300:]}")

    def _stamped(self, index: int, step: Step, ready: float,
                 call: Callable[[], object]) -> bool:
        """`call` stamped with its span and how late it began after `ready` (its instant,
        or its target's previous step's return), to the instant it took effect when the
        call says (a float: epoch seconds), else to its return; a failure said (False)."""
        began = time.time()
        try:
            effected = call()
        except Exception as error:  # any: the pass says what failed, the rest still run
            self.stamps.failures[f"step {index}"] = (
                f"{step.action} at {step.at_ms:g} ms failed: {str(error).strip()[-300:]}")
            return False
        returned = time.time()
        done = effected if isinstance(effected, float) and began <= effected <= returned \
            else returned
        self.stamps.engine[index] = Stamp(began, began - ready, done)
        return True

    def _kill(self, targets: tuple[Target, ...]) -> None:
        for target in targets:
            names = self.containers(target)
            self.run.engine.signal(names, "KILL")
            self.killed[target] = names

    def _start(self, targets: tuple[Target, ...]) -> float | None:
        """Each target started again; the latest instant the engine says one started (its
        StartedAt): the program runs from there, before `restart` returns."""
        names = [n for t in targets for n in self.killed.pop(t, None) or self.containers(t)]
        for name in names:
            self.run.engine.restart(name)
        starts = [started.timestamp() for name in names
                  for listed in self.run.engine.containers([("name", f"^{name}$")])
                  if (started := self.run.engine.health_started(listed)[0]) is not None]
        return max(starts, default=None)

    def cancel(self) -> None:
        """The run was stopped (Ctrl-C, a failure): no step begins from now on, and the
        one under way ends before this returns, so nothing the schedule starts outlives
        the teardown; the helpers and their rules go with the containers."""
        self.stop_reason, self.cancelled = "the run was stopped", True
        self.stopping.set()
        self._join()

    def _join(self) -> None:
        for thread in self.threads:  # the step under way finishes; none after it
            thread.join()
        wait(self.dispatched)  # every kill and start dispatched, chained ones too
        self.workers.shutdown(wait=True)
        self.after.shutdown(wait=True)

    def finish(self, start_killed: bool = True) -> ScheduleRun:
        """Wait for the last step (bounded), read every helper's stamps, delete any rule
        left standing, remove the helpers; targets killed for good are started again
        (the stack as the schedule found it, for the next pass) unless not
        `start_killed`."""
        deadline = self.zero + self.schedule.end_ms / 1000 + LIFT_WAIT_S
        for thread in self.threads:
            thread.join(max(0.0, deadline - time.time()))
        self.stopping.set()
        self._join()
        for edge in self.edges:
            if edge.helper not in self.own or edge.helper in self.stamps.failures:
                continue
            self._read(edge, deadline)
        for target, names in list(self.killed.items()) if start_killed else ():
            for name in names:
                self.run.engine.restart(name)
            self.started(target, time.time())
        return self.stamps

    def _read(self, edge: Edge, deadline: float) -> None:
        steps = self.own[edge.helper]
        text = helper_log(self.run, edge.helper)
        while time.time() < deadline and not self._ended(edge.helper, text):
            time.sleep(0.2)
            text = helper_log(self.run, edge.helper)
        if self.raw is not None:  # raw/PREFIX- + the helper's own part of its name
            save_raw(self.raw.parent / f"{self.raw.name}{edge.helper.removeprefix(self.prefix)}"
                     ".txt", text)
        stamps, failure = parse_edge_helper(text)
        self.stamps.rules[edge.helper] = stamps
        if failure and len(stamps) < len(steps):
            self.stamps.failures[edge.helper] = failure
        self.run.engine.remove(edge.helper)
        if DONE not in text:  # it did not take its chain out itself
            self.run.engine.run_tool(edge.container, ToolSpec(
                (HELPER, "clear", edge.address),
                helper_labels(self.run, edge), capabilities=CAPABILITIES))

    def _ended(self, helper: str, text: str) -> bool:
        """The helper said it was done or failed, or is no longer running."""
        if DONE in text or MARK + "failed" in text:
            return True
        listed = self.run.engine.containers([("name", f"^{helper}$")])
        return not listed or listed[0].state != "running"
