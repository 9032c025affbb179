"""What became of a measurement, as types: code reads these, people read the text.

A pass ends in an Outcome: a State (ok, partial, path dead, failed, not
applicable, not supported) and the Problems that say why, each a kind and its
sentence; the sentences become the results' `status` only when a row is
written (`Outcome.status`). Whether a scenario can run on an overlay at all is
an Applicability, decided before anything starts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
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


class Kind(StrEnum):
    """What a problem is about: what code reads of it."""

    DEAD = "dead"  # the path delivered nothing
    FAILED = "failed"  # a tool, a round or a step failed, or was not confirmed
    PARTIAL = "partial"  # measured, but not everything took part
    UNMEASURED = "unmeasured"  # a figure the pass could not measure
    NOTE = "note"  # measured as it says, with something worth knowing
    LOGS = "logs"  # a dead path's last log lines
    NOT_RUN = "not run"  # not applicable, or not supported
    OUTSIDE_LOAD = "outside load"  # the machine was busy outside the testbed
    DEATH = "death"  # a container of the system under test died
    SHAPING = "shaping"  # the links' shaping was found changed
    REMARK = "remark"  # how the overlay adjusted the settings
    IMPLAUSIBLE = "implausible"  # a figure the mechanism cannot produce (plausibility.py)


OK_STATUS = "ok"  # the status of a pass with no problem
# an IMPLAUSIBLE problem's sentence: "FIGURE implausible: why" (plausibility.py)
IMPLAUSIBLE_MARK = "implausible"


@dataclass(frozen=True)
class Problem:
    """One thing a pass's status says. An `addendum` adds to what was said before
    it, and alone follows "ok" ("ok; no tcp_retransmits: ..."), as statuses read
    before problems were typed."""

    kind: Kind
    sentence: str
    addendum: bool = False


@dataclass
class Outcome:
    """A pass's state and its problems, in the order the status says them."""

    state: State = State.OK
    problems: list[Problem] = field(default_factory=list)

    @property
    def status(self) -> str:
        """The sentence the results' `status` column carries."""
        return compose(self.problems)

    def add(self, kind: Kind, sentence: str, addendum: bool = False) -> None:
        self.problems.append(Problem(kind, sentence, addendum))

    def has(self, *kinds: Kind) -> bool:
        return any(problem.kind in kinds for problem in self.problems)

    @property
    def kinds(self) -> tuple[Kind, ...]:
        """Its problems' kinds, each once, in the order said: the results' `kinds`."""
        return tuple(dict.fromkeys(problem.kind for problem in self.problems))


def compose(problems: list[Problem]) -> str:
    """The problems' sentences joined with "; ", "ok" when there are none (or an
    addendum comes first)."""
    said = [problem.sentence for problem in problems]
    if not problems or problems[0].addendum:
        said.insert(0, OK_STATUS)
    return "; ".join(said)


def single(state: State, kind: Kind, sentence: str) -> Outcome:
    """An outcome of one problem."""
    return Outcome(state, [Problem(kind, sentence)])


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


def kinds_of_status(status: str) -> tuple[Kind, ...]:
    """The kinds a reader asks of a status, for results written before kinds were a
    column: outside load and implausible figures, read from their sentences."""
    said = ((Kind.OUTSIDE_LOAD, "under outside load" in status),
            (Kind.IMPLAUSIBLE, bool(implausible_figures(status))))
    return tuple(kind for kind, found in said if found)


def implausible_figures(status: str) -> set[str]:
    """The figures a status says are implausible ("tcp_crr_tps implausible: ..."), for
    the report to mark them."""
    return set(re.findall(rf"(?:^|; )(\w+) {IMPLAUSIBLE_MARK}: ", status))
