"""What became of a measurement, as types: code reads these, people read the text.

A pass ends in a State (ok, partial, path dead, failed, not applicable, not
supported) with a sentence saying why; whether a scenario can run on an
overlay at all is an Applicability, decided before anything starts.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import ClassVar


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
class NotRunnable:
    """Why a scenario cannot run on an overlay; `status` is the results' sentence."""

    reason: str
    state: ClassVar[State]
    prefix: ClassVar[str] = ""

    @property
    def status(self) -> str:
        return f"{self.prefix}{self.reason}"


@dataclass(frozen=True)
class NotApplicable(NotRunnable):
    """The overlay has no such thing: "kernel routing has no joins ..."."""

    state = State.NOT_APPLICABLE
    prefix = "not applicable: "


@dataclass(frozen=True)
class Unsupported(NotRunnable):
    """This build lacks a feature: "not supported by this vNet build: ..." (its own words)."""

    state = State.UNSUPPORTED


Applicability = Applicable | NotApplicable | Unsupported
APPLICABLE = Applicable()


def state_of_status(status: str) -> State:
    """The state of a status sentence, for results written before states were a column."""
    for state in (State.NOT_APPLICABLE, State.PARTIAL, State.DEAD, State.OK):
        if status.startswith(state.value):
            return state
    return State.UNSUPPORTED if status.startswith("not supported") else State.FAILED
