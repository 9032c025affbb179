"""What became of a measurement, as types: code reads these, people read the text.

A pass ends in a State (ok, partial, path dead, failed, not applicable, not
supported) with a sentence saying why; whether a scenario can run on an
overlay at all is an Applicability, decided before anything starts.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class State(StrEnum):
    OK = "ok"
    PARTIAL = "partial"  # measured, but not everything took part (e.g. some agents never joined)
    DEAD = "path dead"  # the path delivered nothing
    FAILED = "failed"  # a tool or the overlay failed; no numbers
    NOT_APPLICABLE = "not applicable"  # the overlay has no such thing (baseline: no joins)
    UNSUPPORTED = "not supported"  # this build of the overlay lacks a feature it needs

    @property
    def measured(self) -> bool:
        """Numbers of this state go into summaries and comparisons."""
        return self in (State.OK, State.PARTIAL)


@dataclass(frozen=True)
class Applicable:
    pass


@dataclass(frozen=True)
class NotApplicable:
    reason: str  # e.g. "kernel routing has no joins or configuration to change"
    state = State.NOT_APPLICABLE

    @property
    def status(self) -> str:
        return f"not applicable: {self.reason}"


@dataclass(frozen=True)
class Unsupported:
    reason: str  # e.g. "not supported by this vNet build: its agent program has no ..."
    state = State.UNSUPPORTED

    @property
    def status(self) -> str:
        return self.reason


Applicability = Applicable | NotApplicable | Unsupported
APPLICABLE = Applicable()


def state_of_status(status: str) -> State:
    """The state of a status sentence, for results written before states were a column."""
    for state in (State.NOT_APPLICABLE, State.PARTIAL, State.DEAD, State.OK):
        if status.startswith(state.value):
            return state
    return State.UNSUPPORTED if status.startswith("not supported") else State.FAILED
