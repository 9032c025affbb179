"""failover's outcome of one fault (what was measured: the stamps, the traces, the
rejoins) and the pass result read from it: the figures, the timeline, the words
(pure; vnetbench/scenarios/failover.py measures)."""

from __future__ import annotations

from dataclasses import dataclass, field

from vnetbench.core.outcome import Kind, Outcome, Problem, State
from vnetbench.declared.declaration import Values
from vnetbench.declared.failover import ANSWERED, DECLARATION, FAULT_AT, FAULT_END
from vnetbench.faults.window import FaultWindow, answered_after, recovery_ms
from vnetbench.measure.outage import (
    Outage,
    ProbeTrace,
    StreamTrace,
    answered_bins,
    outage_of,
)
from vnetbench.model.topology import Fault
from vnetbench.scenarios.base import PassResult, SeriesPoint

PROBE_INTERVAL_S = 0.01


@dataclass
class FaultOutcome:
    label: str
    fault: Fault
    # the instants stamped where the fault acted (faults/window.py)
    window: FaultWindow | None = None
    remote: ProbeTrace | None = None
    local: ProbeTrace | None = None
    stream: StreamTrace | None = None
    killed: list[str] = field(default_factory=list)  # services
    ready_s: float | None = None  # killed container: start asked to ready
    rejoin_s: float | None = None
    rejoined: int | None = None
    expected_rejoins: int = 0
    # agents that logged no join event since the fault (their last log lines): a
    # figure of the overlay's logs, not of whether their paths answer
    no_rejoin_event: dict[str, list[str]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # the executor's, on the fault's timing
    window_s: float = 0.0  # how long after the fault recovery is waited for
    # the machine restarted during a kill (a new join while the role is down)
    latecomer: str | None = None
    latecomer_started_at: float | None = None  # epoch seconds, its restart asked
    late_join_s: float | None = None  # its first join event after that
    late_joined_during: bool | None = None  # before the killed role was started again
    latecomer_service: str | None = None

    @property
    def effective_start(self) -> float | None:
        """The fault in effect on every edge (epoch seconds, the probes' clock)."""
        return self.window.start if self.window else None

    @property
    def effective_end(self) -> float | None:
        """Lifted on every edge (None: not lifted, or a kill for good)."""
        return self.window.end if self.window else None

    @property
    def lift_asked(self) -> float | None:
        """The first edge's lift step began (a restart asked of the engine): nothing the
        fault held back can come before it; a restarted role's namespace routes again
        before the engine stamps it started."""
        began = [e.lift.began for e in self.window.edges if e.lift] if self.window else []
        return min(began, default=None)

    @property
    def recovered_since(self) -> float | None:
        """The instant after which an answer means the path recovered: the lift, or
        for a kill for good the fault's start (nothing lifts it)."""
        if self.fault.lasts_ms is None:
            return self.effective_start
        return self.effective_end

    def cut_short(self, outage: Outage | None) -> bool:
        """Never answered again, and the probe's trace ends well before the window
        does (the probe itself ended): its silence is a lower bound, not the outage."""
        return bool(outage and not outage.recovered and outage.ms < (self.window_s - 1) * 1000)

    def outage(self, trace: ProbeTrace | None) -> Outage | None:
        if trace is None or self.effective_start is None:
            return None
        return outage_of(trace, self.effective_start, PROBE_INTERVAL_S)


def never_recovered(o: FaultOutcome) -> bool | None:
    """The cross-switch path answered no probe after the lift (a kill for good: after
    the fault's start); None: no trace, or the fault never took effect."""
    if o.remote is None or o.recovered_since is None:
        return None
    return not answered_after(o.remote, o.recovered_since)


def window_values(o: FaultOutcome) -> dict[str, float | None]:
    """When the fault was in effect, measured beside the declared span, and the
    overlay's own part after the lift (recovery_ms)."""
    window = o.window
    measured = window.measured_ms if window else None
    spread = window.spread_ms() if window else None
    return {"fault_ms": round(measured, 1) if measured is not None else None,
            "fault_declared_ms": o.fault.lasts_ms,
            "fault_spread_ms": round(spread, 1) if spread is not None else None,
            "recovery_ms": (round(found, 1) if o.remote is not None and o.fault.lasts_ms
                            is not None and (found := recovery_ms(o.remote, o.effective_end))
                            is not None else None)}


def fault_values(o: FaultOutcome, remote: Outage | None, local: Outage | None) -> Values:
    stream, short = o.stream, o.cut_short(remote)
    never = never_recovered(o)
    figures: dict[str, float | int | None] = {
        "outage_ms": round(remote.ms, 1) if remote and not short else None,
        "lost": remote.lost if remote and not short else None,
        "local_outage_ms": round(local.ms, 1) if local else None,
        "local_lost": local.lost if local else None,
        "tcp_stall_ms": (round(stream.stall_s * 1000) if stream and stream.intervals
                         else None),
        "tcp_survived": int(stream.survived) if stream and stream.intervals else None,
        "rejoin_seconds": o.rejoin_s,
        "not_recovered": None if never is None else int(never),
        "no_rejoin_event": len(o.no_rejoin_event) if o.rejoined is not None else None,
        "ready_seconds": o.ready_s,
        **window_values(o),
    }
    if o.latecomer_started_at is not None:
        figures |= {"late_join_s": o.late_join_s,
                    "late_joined_during": (None if o.late_joined_during is None
                                           else int(o.late_joined_during))}
    return {DECLARATION.series(name, fault=o.label): value for name, value in figures.items()}


def timeline_of(o: FaultOutcome) -> tuple[list[SeriesPoint], Values]:
    """The answered-share rows, and the effective instants on their axis (seconds
    after the probe's first answer)."""
    if o.remote is None or not o.remote.replies or o.effective_start is None:
        return [], {}
    first = o.remote.replies[0].at
    answered = DECLARATION.series(ANSWERED, fault=o.label)
    series = [SeriesPoint(answered, share, DECLARATION.unit(answered), at)
              for at, share in answered_bins(o.remote, first)]
    marks: Values = {DECLARATION.series(FAULT_AT, fault=o.label):
                     round(o.effective_start - first, 3)}
    if o.effective_end is not None:
        marks[DECLARATION.series(FAULT_END, fault=o.label)] = round(o.effective_end - first, 3)
    return series, marks


def summary_of(o: FaultOutcome, remote: Outage | None) -> str:
    stream, short = o.stream, o.cut_short(remote)
    window = o.window
    recovery = window_values(o)["recovery_ms"]
    return (f"{remote.ms:.0f}ms/{remote.lost} lost" if remote and not short else "-") + (
        f", in effect {window.measured_ms:.0f}ms of {o.fault.lasts_ms:.0f}"
        if window and window.measured_ms is not None and o.fault.lasts_ms else "") + (
        f", recovery {recovery:.0f}ms" if recovery is not None else "") + (
        f", tcp {'kept' if stream.survived else 'lost'}"
        if stream and stream.intervals else "") + (
        f", rejoin {o.rejoin_s:.1f}s" if o.rejoin_s is not None else "") + (
        f", late join {o.late_join_s:.1f}s" if o.late_join_s is not None else "")


def said_of(o: FaultOutcome, remote: Outage | None) -> list[str]:
    """What the pass says of a fault: its mechanism's problems (late or failed edges),
    a path that never answered after the lift, agents with no rejoin event."""
    said = list(o.problems)  # the window's own, as the executor read them (inject)
    if remote is None and not said:
        said.append("no answer before the fault")
    if never_recovered(o):
        said.append(f"{o.fault.describe()}: never recovered, the path answered no probe "
                    "after the fault was lifted, within the window" if o.fault.lasts_ms
                    is not None else f"{o.fault.describe()}: the path answered no probe "
                    "after the fault, within the window")
        if o.cut_short(remote) and remote:
            said[-1] += (f" (its probe ended {remote.ms:.0f} ms after the last answer, "
                         "before the window did: no outage figure)")
    for agent, lines in o.no_rejoin_event.items():
        said.append(f"{agent} logged no rejoin event since the fault (its log ends: "
                    f"{' | '.join(lines) or 'nothing'})")
    return said


def result_of(outcomes: list[FaultOutcome]) -> PassResult:
    values: Values = {}
    series: list[SeriesPoint] = []
    summary: dict[str, float | int | str | None] = {}
    problems: list[Problem] = []
    notes: list[str] = []
    state = State.OK
    for o in outcomes:
        remote, local = o.outage(o.remote), o.outage(o.local)
        values |= fault_values(o, remote, local)
        points, marks = timeline_of(o)
        series += points
        values |= marks
        summary[o.label] = summary_of(o, remote)
        said = said_of(o, remote)
        kind = Kind.FAILED if remote is None else Kind.PARTIAL
        problems += [Problem(kind, f"{o.label}: {s}") for s in said]
        notes += [f"{o.label}: {s}" for s in o.notes]
        if remote is None:
            state = State.FAILED
        elif said and state is State.OK:
            state = State.PARTIAL
    return PassResult(DECLARATION.emitted(values), summary, Outcome(state, problems),
                      notes=notes, series=series,
                      fault_killed={s for o in outcomes for s in o.killed}
                      | {o.latecomer_service for o in outcomes if o.latecomer_service})
