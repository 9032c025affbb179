"""When a fault was in effect, from the instants stamped where it acted.

A fault acts on edges: a link fault on every container of the backbone (a staged
helper each, faults/edges.py), a kill on the containers the engine signals. Each
edge gives two stamps, applying and lifting: when its step began (and how late that
was against the instant it was staged for) and when its command returned. The
fault is in effect on the whole path from the latest edge's applied instant
(`start`) to the latest edge's lifted instant (`end`), all on the host's clock,
the clock the probes' `ping -D` stamps use.

A staged step sleeps in vnetbench-at and is woken by its timer: on this 2-core
host under load the scheduler runs a woken task within its period (6 ms x (1 +
log2 2 CPUs) = 12 ms), so a step that began more than LATE_BOUND_S after its
instant was not waiting when the instant came (its container started late) and
the fault did not start in one step; the pass says so, naming the edge.
"""

from __future__ import annotations

from dataclasses import dataclass

from vnetbench.measure.outage import ProbeTrace, Reply

# the scheduler's period on 2 CPUs (12 ms) with headroom, well under the 50 ms an
# outage may exceed its declared span by
LATE_BOUND_S = 0.02


@dataclass(frozen=True)
class Stamp:
    """One step on one edge: began (epoch s), late against its instant, done."""

    began: float
    late_s: float
    done: float | None  # its command returned (None: it failed)


@dataclass(frozen=True)
class EdgeStamps:
    edge: str  # the helper, or the containers an engine call acted on
    apply: Stamp | None = None
    lift: Stamp | None = None
    failure: str | None = None  # the helper's own words, or why there is no stamp


@dataclass(frozen=True)
class FaultWindow:
    """A fault's edges and, from them, when it was in effect."""

    edges: tuple[EdgeStamps, ...]
    declared_ms: float | None  # None: a kill for good
    staged: bool = True  # False: stamped on the host after a slower step (say why)

    @property
    def start(self) -> float | None:
        """The latest edge's applied instant (None: no edge applied it)."""
        applied = [e.apply.done for e in self.edges if e.apply and e.apply.done]
        return max(applied) if applied else None

    @property
    def end(self) -> float | None:
        """The latest edge's lifted instant (None: not lifted everywhere)."""
        lifted = [e.lift.done for e in self.edges if e.lift and e.lift.done]
        return max(lifted) if lifted and len(lifted) == len(self.edges) else None

    @property
    def measured_ms(self) -> float | None:
        if self.start is None or self.end is None:
            return None
        return (self.end - self.start) * 1000

    def spread_ms(self, step: str = "apply") -> float | None:
        """From the first edge's `step` ("apply" or "lift") beginning to the last edge's
        command returning: the span within which the path went from clear to faulted
        (an engine call's own span, for a single edge)."""
        stamps: list[Stamp] = [s for e in self.edges if (s := getattr(e, step)) is not None]
        done = [s.done for s in stamps if s.done is not None]
        if not done:
            return None
        return (max(done) - min(s.began for s in stamps)) * 1000.0

    def problems(self, bound_s: float = LATE_BOUND_S) -> list[str]:
        """Edges that failed, began late or never gave a stamp, one sentence each."""
        said = []
        for edge in self.edges:
            if edge.failure:
                said.append(f"{edge.edge} failed: {edge.failure}")
            for step, stamp in (("apply", edge.apply), ("lift", edge.lift)):
                if stamp is None:
                    if step == "apply" or self.declared_ms is not None:
                        said += [] if edge.failure else [f"{edge.edge} gave no {step} stamp"]
                elif stamp.late_s > bound_s:
                    said.append(f"{edge.edge} began its {step} {stamp.late_s * 1000:.0f} ms "
                                f"after the instant (bound {bound_s * 1000:.0f} ms): it was "
                                "not waiting when the instant came")
        return said


def first_answer_after(trace: ProbeTrace, instant: float) -> Reply | None:
    return next((r for r in trace.replies if r.at > instant), None)


def recovery_ms(trace: ProbeTrace, lifted_at: float | None) -> float | None:
    """The first answer after the lift, less the lift instant: the overlay's own part
    of the outage (None: not lifted, or never answered again)."""
    if lifted_at is None:
        return None
    first = first_answer_after(trace, lifted_at)
    return None if first is None else (first.at - lifted_at) * 1000


def answered_after(trace: ProbeTrace, instant: float | None) -> bool:
    """Recovered: the path answered at least once after `instant`."""
    return instant is not None and first_answer_after(trace, instant) is not None
