"""The exit status as a contract, the same on every command, so a CI job can gate on a
plain `vnetbench run`: what each status means, and the decision a measuring command
takes from its results (a pure function of the passes' states).

0 everything measured and every target met; 1 a measured result failed (a pass
failed, the path was dead, a target missed, no size met the target, a regression);
2 bad input; 3 the engine or the environment; 130 interrupted.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING

from vnetbench.core.outcome import State
from vnetbench.core.schema import METHOD, OVERLAY, PASS, SCENARIO, STATE, VARIANT

if TYPE_CHECKING:
    import pandas as pd


class ExitStatus(IntEnum):
    OK = 0
    MISSED = 1
    BAD_INPUT = 2
    ENVIRONMENT = 3
    INTERRUPTED = 130


# (status, meaning, in short): the root --help's table; docs/exit-status.md says more
MEANINGS: tuple[tuple[ExitStatus, str], ...] = (
    (ExitStatus.OK, "everything measured, every target met"),
    (ExitStatus.MISSED, "a measured miss (a pass failed, path dead, target missed)"),
    (ExitStatus.BAD_INPUT, "bad input (an option, a topology, a results file)"),
    (ExitStatus.ENVIRONMENT, "the engine or the environment (Docker, images, disk)"),
    (ExitStatus.INTERRUPTED, "interrupted (Ctrl-C, SIGTERM); all torn down"),
)

# A pass in these states measured nothing it claims: a miss. Partial passes measured
# (what took part), and a pass not applicable or not supported was never meant to run.
FAILED_STATES = frozenset({State.FAILED, State.DEAD})


def help_epilog() -> str:
    """The table, as the root --help's epilog (Click keeps lines apart given \\b)."""
    lines = [f"  {status.value:>3}  {meaning}" for status, meaning in MEANINGS]
    return "\b\nExit status:\n" + "\n".join(lines)


@dataclass(frozen=True)
class FailedCell:
    """One cell's failed passes: what ran, where, which passes and how they ended."""

    scenario: str
    overlay: str
    variant: str
    passes: tuple[int, ...]
    states: tuple[str, ...]

    def describe(self) -> str:
        """'throughput on wireguard (default): passes 1, 2 path dead'."""
        where = f"{self.scenario} on {self.overlay}"
        if self.variant and self.variant != "default":
            where += f" ({self.variant})"
        word = "pass" if len(self.passes) == 1 else "passes"
        return f"{where}: {word} {', '.join(map(str, self.passes))} {'/'.join(self.states)}"


def failed_cells(frame: pd.DataFrame) -> list[FailedCell]:
    """The cells (scenario, overlay, variant; a method's step) with a failed or dead pass,
    in the order the results hold them."""
    if frame.empty or STATE not in frame.columns:
        return []
    failed = frame[frame[STATE].isin([s.value for s in FAILED_STATES])]
    cells: list[FailedCell] = []
    keys = [SCENARIO, OVERLAY, VARIANT, *([METHOD] if METHOD in frame.columns else [])]
    for key, rows in failed.groupby(keys, sort=False, dropna=False):
        scenario, overlay, variant = (str(part) for part in key[:3])
        method = str(key[3]) if len(key) > 3 and str(key[3]) not in ("", "nan") else ""
        cells.append(FailedCell(
            scenario=f"{method} {scenario}" if method else scenario, overlay=overlay,
            variant=variant, passes=tuple(sorted({int(p) for p in rows[PASS]})),
            states=tuple(dict.fromkeys(str(s) for s in rows[STATE]))))
    return cells


def passes_status(failed: list[FailedCell], allow_failed: bool) -> ExitStatus:
    """1 when a pass failed or its path was dead, unless failures are allowed."""
    return ExitStatus.MISSED if failed and not allow_failed else ExitStatus.OK


def failure_summary(failed: list[FailedCell], allow_failed: bool) -> str:
    """One line for stderr: which cells failed, and what the exit status makes of it."""
    count = sum(len(cell.passes) for cell in failed)
    said = "; ".join(cell.describe() for cell in failed)
    then = ("exit 0 (--allow-failed)" if allow_failed
            else "exit 1 (give --allow-failed to exit 0 anyway)")
    return f"{count} failed pass(es) in {len(failed)} cell(s): {said}; {then}"
