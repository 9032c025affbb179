"""`vnetbench capacity`: the largest room (machines), or the largest rate per machine,
that meets a target such as p99=50ms,failed=0, found by a search that says each
step it took. Under a workload (the topology's `workload:`, or --workload) a target
may also name a phase or an at-once event: p99@steady=50ms, failed@end-rush=0,
last@statement=10s (until the last machine had the event's object).

The search doubles from a start until a step misses the target (or the bound is
reached), then halves the gap between the largest size that met it and the
smallest that missed until the two are within `precision` of each other. Each
step is one room pass on a stack of its own, into one results frame. A step that
did not measure (a dead path, a failed tool) counts as a miss and says why. The
limit is named at the smallest size that missed: the host (its CPU was
saturated, so the answer is this machine, not the overlay), one role's CPU (a
core's worth: one busy daemon), or the overlay.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
from pydantic import ValidationError

from vnetbench.analysis.results import ResultSet, named
from vnetbench.analysis.runrecord import new_record, recorded
from vnetbench.core.model import NAME_PATTERN
from vnetbench.core.outcome import State
from vnetbench.core.schema import (
    EVENT,
    MACHINES,
    METRIC,
    PHASE,
    ROLE,
    STATE,
    STATUS,
    VALUE,
    VARIANT,
    Variant,
)
from vnetbench.core.units import parse_milliseconds
from vnetbench.declared import catalogue
from vnetbench.declared.declaration import GENERATOR_BEHIND, LOAD_ROLE
from vnetbench.errors import UserError
from vnetbench.model.topology import Topology
from vnetbench.overlays import Overlay
from vnetbench.report.cost import write_cost
from vnetbench.report.plots import capacity_plot
from vnetbench.runs.session import run_scenarios
from vnetbench.runtime.host_limits import inotify_limit
from vnetbench.runtime.rundir import new_directory, stamp
from vnetbench.scenarios import Scenario, scenario_playing
from vnetbench.terminal.ui import job_progress, note

HOST_SATURATED_PERCENT = 90.0  # of all cores: the host, not the overlay, is the limit
ROLE_SATURATED_PERCENT = 90.0  # of one core: a single busy daemon
DIMENSIONS = {"machines": MACHINES, "rate": "room_rate"}
MOST_STEPS = 16  # doubling from 1 to 10 000 and halving to 10 %: 14 at most


@dataclass(frozen=True)
class Clause:
    """One part of the target: a room metric and its bound (at most, or at least)."""

    key: str
    metric: str
    bound: float
    at_least: bool = False
    unit: str = ""
    kind: str = "time"  # how its value is written: a time, a count, a floor (EXAMPLES)

    def judge(self, value: float | None) -> str | None:
        """Why the value misses this clause, or None when it meets it."""
        if value is None or value != value:
            return f"no {self.key} measured"
        met = value >= self.bound if self.at_least else value <= self.bound
        if met:
            return None
        sign = "<" if self.at_least else ">"
        return f"{self.key} {value:.4g}{self.unit} {sign} {self.bound:g}{self.unit}"


# key -> (the room's metric, how its value is written: a time, a count, a floor)
SLO_KEYS: dict[str, tuple[str, str]] = {
    "p50": ("room_p50_ms", "time"), "p95": ("room_p95_ms", "time"),
    "p99": ("room_p99_ms", "time"), "max": ("room_max_ms", "time"),
    "failed": ("room_failed", "count"), "fairness": ("room_fairness", "floor")}
# KEY@PHASE: a phase of the room's workload; KEY@EVENT: one of its at-once events
PHASE_SLO_KEYS: dict[str, tuple[str, str]] = {
    "p50": ("room_phase_p50_ms", "time"), "p99": ("room_phase_p99_ms", "time"),
    "max": ("room_phase_max_ms", "time"), "failed": ("room_phase_failed", "count")}
EVENT_SLO_KEYS: dict[str, tuple[str, str]] = {
    "last": ("room_burst_last_ms", "time"), "unfinished": ("room_burst_unfinished", "count")}
EXAMPLES = {"time": "50ms", "count": "0", "floor": "0.9"}


def target_of(key: str) -> tuple[str, str] | None:
    """A key's metric series and how its value is written: `p99` the room's,
    `p99@steady` a phase's, `last@statement` an at-once event's; None: no such key."""
    base, at, part = key.partition("@")
    if not at:
        return SLO_KEYS.get(base)
    if not re.fullmatch(NAME_PATTERN, part):
        return None
    for keys, dimension in ((PHASE_SLO_KEYS, PHASE), (EVENT_SLO_KEYS, EVENT)):
        if base in keys:
            metric, kind = keys[base]
            return catalogue().series_name(metric, {dimension: part}), kind
    return None


def clause_of(key: str, text: str) -> Clause:
    target = target_of(key)
    assert target is not None
    metric, kind = target
    if kind == "time":
        return Clause(key, metric, parse_milliseconds(text), unit=" ms")
    return Clause(key, metric, float(text), at_least=kind == "floor", kind=kind)


def clause_problem(clause: Clause) -> str:
    """Why a clause can never be met or means nothing; empty when it is a target."""
    kind = clause.kind
    bound = clause.bound
    if not math.isfinite(bound):
        return "it is not a finite number"
    if kind == "time" and bound <= 0:
        return "no request is answered in 0 ms, so no room could meet it"
    if kind == "count" and (bound < 0 or not bound.is_integer()):
        counted = "machines" if clause.key.startswith("unfinished@") else "failed requests"
        return f"{counted} are counted in whole numbers from 0"
    if kind == "floor" and not 0 < bound <= 1:
        return ("Jain's fairness lies between 0 and 1 (1: every machine served alike), so "
                + ("every room meets it" if bound <= 0 else "no room could meet it"))
    return ""


def parse_slo(text: str) -> list[Clause]:
    """'p99=50ms,failed=0' -> its clauses; UserError naming the part that is wrong."""
    clauses: list[Clause] = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        key, sep, value = part.partition("=")
        key = key.strip()
        target = target_of(key) if sep else None
        if target is None:
            raise UserError(
                f"--slo {text}: '{part}' is not a target. Write KEY=VALUE parts separated "
                f"by commas, KEY one of {', '.join(SLO_KEYS)} (latencies as times, e.g. "
                "p99=50ms; failed as a count, e.g. failed=0; fairness at least, e.g. "
                "fairness=0.9); under a workload also KEY@PHASE, KEY one of "
                f"{', '.join(PHASE_SLO_KEYS)} (e.g. p99@steady=50ms), and KEY@EVENT for an "
                f"at-once event, KEY one of {', '.join(EVENT_SLO_KEYS)} (e.g. "
                "last@statement=10s).")
        example = EXAMPLES[target[1]]
        try:
            clause = clause_of(key, value.strip())
        except (ValueError, UserError):
            raise UserError(f"--slo {text}: '{value}' is not a value for {key} (e.g. "
                            f"{example}).") from None
        problem = clause_problem(clause)
        if problem:
            raise UserError(f"--slo {text}: '{part}': {problem}. Give {key} a target a room "
                            f"can meet or miss, e.g. {key}={example}.")
        if any(c.key == key for c in clauses):
            raise UserError(f"--slo {text}: {key} is given twice; give each key once.")
        clauses.append(clause)
    if not clauses:
        raise UserError("--slo is empty: give a target such as p99=50ms,failed=0.")
    return clauses


@dataclass
class Step:
    size: float
    met: bool
    said: str  # the figures and the verdict, for people
    limit: str | None = None


@dataclass
class Search:
    """Doubling, then halving the gap; `steps` in the order they ran."""

    start: float
    most: float
    precision: float
    whole: bool  # sizes are whole numbers (machines)
    steps: list[Step] = field(default_factory=list)

    def best(self) -> float | None:
        met = [s.size for s in self.steps if s.met]
        return max(met) if met else None

    def first_miss(self) -> Step | None:
        missed = [s for s in self.steps if not s.met]
        return min(missed, key=lambda s: s.size) if missed else None

    def next_size(self) -> float | None:
        """The next size to try, or None when the search is done."""
        if not self.steps:
            return self.start
        best, miss = self.best(), self.first_miss()
        if miss is None:
            if best is None or best >= self.most:
                return None
            return self.rounded(min(self.most, best * 2))
        if best is None:
            return None  # the start itself missed: no room size meets the target
        if miss.size - best <= max(1.0 if self.whole else 0.0, self.precision * best):
            return None
        middle = self.rounded((best + miss.size) / 2)
        return None if middle in (best, miss.size) else middle

    def rounded(self, size: float) -> float:
        return float(math.floor(size)) if self.whole else round(size, 3)


def judge_step(rows: pd.DataFrame, clauses: list[Clause]) -> tuple[bool, str, str | None]:
    """A step's rows (one pass or several) against the target: met, what it says, and
    the limit it shows. Over several passes a figure is the passes' median, a count
    (failed requests, machines without a record) the worst pass's: a pass that
    failed requests is not outvoted by two that did not."""
    values = step_values(rows)
    states = [str(state) for state in dict.fromkeys(rows[STATE])] if len(rows) else []
    unmeasured = [state for state in states if not State(state).measured]
    state = unmeasured[0] if unmeasured else (states[0] if states else State.FAILED.value)
    status = "; ".join(str(s) for s in dict.fromkeys(rows[STATUS])) if len(rows) else "no rows"
    figures = ", ".join(f"{c.key} {values.get(c.metric, float('nan')):.4g}{c.unit}"
                        for c in clauses)
    host = values.get("room_host_cpu_percent")
    load = f"host CPU {host:.0f} %" if host == host and host is not None else "host CPU ?"
    if not State(state).measured:
        return False, f"not measured ({state}: {status})", "the overlay: " + status
    misses = [why for c in clauses if (why := c.judge(values.get(c.metric)))]
    absent = int(values.get("room_no_record", 0) or 0) + int(values.get("room_stalled", 0) or 0)
    if absent:  # their requests are not counted: the room did not hold, whatever its p99
        misses.append(f"{absent} machine(s) without a record (in the status: why)")
    said = f"{figures}; {load}" + (f"; {status}" if status != "ok" else "")
    return (not misses, f"{said}: " + ("met" if not misses else "missed, " + "; ".join(
        misses)), limit_of(values, status) if misses else None)


WORST_OF_PASSES = ("room_failed", "room_timeouts", "room_no_record", "room_stalled",
                   # each of their series (per phase, per at-once event)
                   "room_phase_failed", "room_phase_timeouts", "room_phase_unrecorded",
                   "room_burst_unfinished")


def step_values(rows: pd.DataFrame) -> dict[str, float]:
    """Per series (its one name: `room_cpu_switch_percent`): the median over the step's
    passes; the counts, the worst pass's."""
    grouped = named(rows).groupby(METRIC)[VALUE]
    medians, worst = grouped.median(), grouped.max()
    split = catalogue().split
    return {str(name): float(worst[name] if split(str(name))[0] in WORST_OF_PASSES
                             else medians[name])
            for name in medians.index}


def slo_problems(clauses: list[Clause], topology: Topology, dimension: str) -> list[str]:
    """A target's phases and events the topology's workload has, and a search a
    workload leaves meaning to, one sentence each (none: the target can be judged)."""
    workload = topology.workload
    phases = [p.name for p in workload.phases] if workload else []
    events = [e.name for p in workload.phases for e in p.at_once] if workload else []
    problems = []
    for clause in (c for c in clauses if "@" in c.key):
        base, _, part = clause.key.partition("@")
        known, what = (events, "at-once event") if base in EVENT_SLO_KEYS else (phases, "phase")
        if workload is None:
            problems.append(f"{clause.key}: the topology has no workload, so no {what} "
                            f"{part}; give the room a workload (the topology's workload:, "
                            "or --workload contest), or a target of the whole room")
        elif part not in known:
            problems.append(f"{clause.key}: the workload has no {what} {part} (its "
                            f"{what}s: {', '.join(known) or 'none'})")
    if workload is not None and dimension == "rate":
        problems.append("--by rate: a workload sets each kind's own rate, so room_rate would "
                        "change nothing; search --by machines, or leave the workload out")
    return problems


def limit_of(values: dict[str, float], status: str = "") -> str:
    """What ran out first at a size that missed: the host (its CPU, or a per-user
    kernel limit the machines' programs hit), a role's CPU, or neither."""
    host = values.get("room_host_cpu_percent")
    if "too many open files" in status.lower():
        return ("this machine: a per-user kernel limit ran out as the room grew (\"too many "
                "open files\" in the machines' logs: inotify instances, "
                f"fs.inotify.max_user_instances = {inotify_instances()} here, shared by "
                "every container; or open files), not the overlay")
    if host is not None and host >= HOST_SATURATED_PERCENT:
        return (f"this machine: its CPU was {host:.0f} % busy (all cores), so the room's "
                "limit here is the host, not the overlay")
    if GENERATOR_BEHIND in status:
        return ("this machine: the room's own load generators fell behind their schedule "
                "(the host's CPU short for the testbed itself"
                + (f", {host:.0f} % busy" if host is not None else "")
                + "), so their lateness is in the latencies; not the overlay")
    series = {name: catalogue().split(name) for name in values}
    roles = {series[name][1][ROLE]: value for name, value in values.items()
             if series[name][0] == "room_cpu_percent" and value == value}
    busiest = max(roles.items(), key=lambda item: item[1], default=None)
    if busiest and busiest[1] >= ROLE_SATURATED_PERCENT:
        return (f"the {busiest[0]}'s CPU: {busiest[1]:.0f} % of a core (one daemon "
                "busy), the host not saturated")
    return ("the overlay: neither the host's CPU nor a role's reached saturation"
            + (f" (host {host:.0f} %)" if host is not None else ""))


def inotify_instances() -> str:
    limit = inotify_limit()
    return "unknown" if limit is None else str(limit)


@dataclass(frozen=True)
class CapacityPlan:
    topology: Topology
    overlay: Overlay
    clauses: list[Clause]
    dimension: str  # machines or rate
    start: float
    most: float
    precision: float = 0.1
    passes: int = 1  # per step, on one stack: judged on their median


def run_capacity(plan: CapacityPlan, out_dir: Path) -> tuple[Path, Search]:
    """Search, each step a room pass on its own stack; the results directory."""
    setting = DIMENSIONS[plan.dimension]
    search = Search(plan.start, plan.most, plan.precision, whole=plan.dimension == "machines")
    room = scenario_playing(LOAD_ROLE)
    directory = new_directory(out_dir, f"{plan.topology.name}-{stamp()}-capacity")
    record = new_record("capacity", [plan.overlay], scenario=room.name,
                        dimension=plan.dimension, slo=[c.key for c in plan.clauses])
    results = ResultSet(directory)
    try:
        with recorded(directory, record), job_progress("capacity", steps=MOST_STEPS):
            while (size := search.next_size()) is not None and len(search.steps) < MOST_STEPS:
                search.steps.append(run_step(plan, room, setting, size, results, directory))
                record.steps, record.largest = [vars(s) for s in search.steps], search.best()
    finally:
        results.write()
        capacity_plot(results.frame(), setting, plan.clauses, directory / "capacity.png")
        write_cost(results.frame(), lambda: directory)  # each machine's cost, every step
    return directory, search


def run_step(plan: CapacityPlan, room: Scenario, setting: str, size: float,
             results: ResultSet, directory: Path) -> Step:
    """One room pass at `size` on a stack of its own, judged against the target."""
    variant = f"{plan.dimension}={size:g}"
    topology = with_size(plan.topology, setting, size, plan.passes)
    room.check(topology)
    run_scenarios(topology, [room], directory / "runs", results=results, overlay=plan.overlay,
                  variant=Variant(variant, parameters={setting: size}))
    frame = results.frame()
    met, said, limit = judge_step(frame[frame[VARIANT] == variant], plan.clauses)
    note(f"capacity step: {variant}: {said}")
    return Step(size, met, said, limit)


def with_size(topology: Topology, setting: str, size: float, passes: int = 1) -> Topology:
    """The topology at one size, validated as the file's settings are."""
    value: float | int = int(size) if setting == MACHINES and float(size).is_integer() else size
    settings = {**topology.settings.model_dump(), setting: value, "passes": passes}
    return Topology.model_validate({**topology.model_dump(), "settings": settings})


def check_sizes(topology: Topology, dimension: str, start: float, most: float) -> None:
    """--start and --max within the setting's own bounds (Settings'), above 0 (a search
    doubles from the start), the start at most the max, and the room at --max one the
    scenario can build on this topology: refused before anything starts."""
    setting = DIMENSIONS[dimension]
    for option, size in (("--start", start), ("--max", most)):
        try:
            if not math.isfinite(size):
                raise ValueError("it is not a finite number")
            if size <= 0:
                raise ValueError("a search doubles from its start, so sizes are above 0")
            room = with_size(topology, setting, size)
        except (ValueError, ValidationError) as error:
            said = (str(error) if not isinstance(error, ValidationError)
                    else str(error.errors()[0]["msg"]).removeprefix("Value error, ").lower())
            example = "--start 10 --max 400" if setting == MACHINES else "--start 5 --max 1000"
            raise UserError(f"{option} {size:g}: {said} ({setting}: the room's setting). "
                            f"Give {option} a size the setting allows, e.g. {example}."
                            ) from None
        if option == "--max":
            scenario_playing(LOAD_ROLE).check(room)
    if start > most:
        raise UserError(f"--start {start:g} is above --max {most:g}: the search grows from "
                        "the start up to the max. Give a start at most the max.")
