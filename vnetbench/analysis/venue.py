"""A venue's verdict (issue #60): will the room's machines hold through a contest?
The targets a venue states are --slo's clauses (analysis/slo.py), kept in its
topology's `slo:` (topologies/venue.yml) or given with --slo: the statement reaches
the last machine within S seconds (`room.burst_last_ms_statement<=30000`), a phase's
p99 (`room.phase_p99_ms_steady<=500`), no request of a phase lost
(`room.phase_failed_end-rush<=0`). They are checked as every --slo target is (the
median of a cell's passes); this module says per cell whether the contest held and,
if not, what broke first: the missed target of the earliest moment of the contest,
by the workload's phases in order (an at-once event at its instant, before its
phase's mix), a figure over the whole run (room.p99_ms) last. Pure: from the checked
targets and the workload run.json keeps."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError, computed_field
from pydantic.dataclasses import dataclass

from vnetbench.analysis.slo import Checked, Target, parse_clause
from vnetbench.declared import DECLARED
from vnetbench.errors import UserError
from vnetbench.model.workload import Workload

if TYPE_CHECKING:
    import pandas as pd

ROOM = "room"
WHOLE_RUN = "the whole run"
PHASE, EVENT = "phase", "event"


@dataclass(frozen=True)
class Broken:
    """A missed target at its moment of the contest (pydantic's dataclass: it is part
    of run --json's document)."""

    target: str  # as --slo writes it: room.burst_last_ms_statement<=30000
    phase: str | None  # the workload's phase it measures; None: the whole run
    event: str | None  # the at-once event it measures, if one
    value: float | None  # the cell's median; None: nothing measured
    bound: float
    at_least: bool
    unit: str

    def where(self) -> str:
        if self.phase is None:
            return WHOLE_RUN
        return f"phase {self.phase}" + (f" (at-once event {self.event})" if self.event
                                        else "")

    def describe(self) -> str:
        """'room.phase_p99_ms_steady<=500: measured 812 ms, the target <= 500 ms'."""
        measured = "nothing measured" if self.value is None else \
            f"measured {figure(self.value, self.unit)}"
        return (f"{self.target}: {measured}, the target {'>=' if self.at_least else '<='} "
                f"{figure(self.bound, self.unit)}")


def figure(value: float, unit: str) -> str:
    """'40975 ms (41 s)': a time of seconds in seconds too, as a venue states it."""
    text = f"{value:.6g}" + (f" {unit}" if unit else "")
    return text + (f" ({value / 1000:.3g} s)" if unit == "ms" and value >= 1000 else "")


def clause(target: Target) -> str:
    """The target as a venue writes it (room.phase_p99_ms_steady<=500, not
    room.room_...): --slo takes either."""
    metric = target.metric.removeprefix(f"{target.scenario}_")
    return f"{target.scenario}.{metric}{'>=' if target.at_least else '<='}{target.bound:.10g}"


@dataclass(frozen=True)
class CellVenue:
    """One cell's verdict (an overlay and variant of the room): held, or the first
    target it broke and how many it missed."""

    overlay: str
    variant: str
    checked: int
    missed: int
    first: Broken | None  # the earliest missed target; None: held

    @computed_field  # type: ignore[prop-decorator]
    @property
    def held(self) -> bool:
        return self.missed == 0

    def line(self) -> str:
        """The verdict's line, the first the run and its report say."""
        where = self.overlay + (f" ({self.variant})" if self.variant != "default" else "")
        if self.first is None:
            return (f"HELD on {where}: every venue target met ({self.checked} of "
                    f"{self.checked}).")
        return (f"NOT HELD on {where}: first broke in {self.first.where()}: "
                f"{self.first.describe()} ({self.missed} of {self.checked} target(s) "
                "missed).")


@dataclass(frozen=True)
class VenueVerdict:
    """The room's cells, each held or not: the contest held when every one did."""

    cells: tuple[CellVenue, ...]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def held(self) -> bool:
        return all(cell.held for cell in self.cells)

    def lines(self) -> list[str]:
        return [f"Venue: {cell.line()}" for cell in self.cells]


def moment(target: Target, workload: Workload | None,
           phases: Sequence[str]) -> tuple[str | None, str | None, tuple[float, ...]]:
    """The target's phase and event, and its place in the contest's order: the phase's
    index, the event's instant in it (a phase's mix after its events), a figure over
    the whole run after every phase."""
    values = DECLARED[ROOM].metric(target.metric).values_in(target.metric)
    events = {e.name: (p.name, e.at_s) for p in (workload.phases if workload else ())
              for e in p.at_once}
    if EVENT in values:
        phase, at_s = events.get(values[EVENT], (values[EVENT], 0.0))
        index = phases.index(phase) if phase in phases else -1
        return phase, values[EVENT], (index, at_s, 0)
    if PHASE in values:
        phase = values[PHASE]
        index = phases.index(phase) if phase in phases else len(phases)
        return phase, None, (index, 0.0, 1)
    return None, None, (len(phases) + 1, 0.0, 0)


def venue_verdict(checked: Sequence[Checked], workload: Workload | None,
                  phases: Sequence[str] = ()) -> VenueVerdict | None:
    """Per room cell, held or what broke first; None when no room target was checked.
    `phases`: their order where no workload is known (as the results hold them)."""
    order = [p.name for p in workload.phases] if workload else list(phases)
    cells: dict[tuple[str, str], list[Checked]] = {}
    for one in checked:
        if one.target.scenario == ROOM:
            cells.setdefault((one.overlay, one.variant), []).append(one)
    if not cells:
        return None
    return VenueVerdict(tuple(cell_venue(overlay, variant, own, workload, order)
                              for (overlay, variant), own in cells.items()))


def cell_venue(overlay: str, variant: str, checked: Sequence[Checked],
               workload: Workload | None, phases: Sequence[str]) -> CellVenue:
    missed = sorted((c for c in checked if not c.met),
                    key=lambda c: moment(c.target, workload, phases)[2])
    first = None
    if missed:
        target = missed[0].target
        phase, event, _ = moment(target, workload, phases)
        first = Broken(clause(target), phase, event, missed[0].value, target.bound,
                       target.at_least, target.unit)
    return CellVenue(overlay, variant, len(checked), len(missed), first)


def results_verdict(frame: pd.DataFrame, checked: Sequence[Checked],
                    topology: Mapping[str, Any] | None) -> VenueVerdict | None:
    """The verdict on a run's results: its workload from run.json's topology (a run of
    one overlay keeps it), else its phases in the order the results hold them; None
    where the room ran no workload (a steady room's target is --slo's alone)."""
    workload, phases = recorded_workload(topology), frame_phases(frame)
    if workload is None and not phases:
        return None
    return venue_verdict(checked, workload, phases)


def frame_phases(frame: pd.DataFrame) -> list[str]:
    """The room's phases in the order its rows hold them (a pass emits them in order)."""
    from vnetbench.core.schema import PHASE as COLUMN
    from vnetbench.core.schema import SCENARIO

    if frame.empty or COLUMN not in frame.columns:
        return []
    rows = frame[frame[SCENARIO] == ROOM][COLUMN].dropna().astype(str)
    return [phase for phase in dict.fromkeys(rows) if phase]


def recorded_workload(topology: Mapping[str, Any] | None) -> Workload | None:
    """The workload run.json's topology ran (None: none, or not readable as one)."""
    data = (topology or {}).get("workload")
    if not isinstance(data, dict):
        return None
    try:
        return Workload.model_validate(data)
    except ValidationError:
        return None


def topology_targets(clauses: Sequence[str], workload: Workload | None,
                     source: str, moments: bool = True) -> list[Target]:
    """A topology's `slo:` as targets, refused (one paragraph naming the file and the
    fix) where --slo would refuse it, or (`moments`) where it names a phase or at-once
    event its workload does not have: that target would never be judged."""
    if not clauses:
        return []
    targets: list[Target] = []
    for clause in clauses:
        target = parse_clause(clause, f"{source}: slo")
        if any((t.metric, t.at_least) == (target.metric, target.at_least) for t in targets
               if t.scenario == target.scenario):
            raise UserError(f"{source}: slo: {clause} gives {target.scenario}."
                            f"{target.metric} a second bound the same way; give each once "
                            "in the file.")
        targets.append(target)
    if moments:
        check_moments(targets, workload, f"{source}: slo",
                      "Fix the target in the file (or drop it) and run again.")
    return targets


def check_moments(targets: Sequence[Target], workload: Workload | None, source: str,
                  fix: str) -> None:
    """UserError naming each room target on a phase or event the workload lacks."""
    problems = [problem for target in targets
                if (problem := unknown_moment(target, workload)) is not None]
    if problems:
        raise UserError(f"{source}: {'; '.join(problems)}. {fix}")


def unknown_moment(target: Target, workload: Workload | None) -> str | None:
    """Why a room target's phase or event is none of the workload's, or None."""
    if target.scenario != ROOM:
        return None
    values = DECLARED[ROOM].metric(target.metric).values_in(target.metric)
    if not values.keys() & {PHASE, EVENT}:
        return None
    if workload is None:
        return (f"{target.text} measures a workload's phase or at-once event, and the "
                "room runs no workload (give the topology `workload: contest`, or "
                "--workload)")
    kind = PHASE if PHASE in values else EVENT
    names = [p.name for p in workload.phases] if kind == PHASE else \
        [e.name for p in workload.phases for e in p.at_once]
    if values[kind] in names:
        return None
    return (f"{target.text}: the workload {workload.name or 'unnamed'} has no {kind} "
            f"'{values[kind]}' (its {kind}s: {', '.join(names) or 'none'})")


def run_topology_targets(clauses: Sequence[str], workload: Workload | None,
                         scenarios: Sequence[str], source: str
                         ) -> tuple[list[Target], list[str]]:
    """The topology's targets on the scenarios this run measures, and the texts of
    those left unchecked (on a scenario it does not run)."""
    targets = topology_targets(clauses, workload, source)
    return ([t for t in targets if t.scenario in scenarios],
            [t.text for t in targets if t.scenario not in scenarios])
