"""An `ab` session's verdicts as a Markdown section for a CI job's summary
(`ab --summary FILE`; GitHub Actions' $GITHUB_STEP_SUMMARY, scripts/vnet-gate).

The outcome comes first, as a reviewer asks it: a judged regression, none, or
nothing could be judged; then what each arm was, ab's sentence and the verdict
table (vnetbench/report/ab.py's `verdict_summary`). Every piece of data is
escaped as report.md escapes it: a log line in a status cannot become markup."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Any

import pandas as pd

from vnetbench.analysis.results import load_results
from vnetbench.analysis.runrecord import read_record
from vnetbench.analysis.stats import Verdict
from vnetbench.core.outcome import State
from vnetbench.core.schema import STATE, STATUS
from vnetbench.errors import UserError
from vnetbench.report.ab import read_verdicts, verdict_summary
from vnetbench.report.markdown import cell, escaped_table, literal
from vnetbench.report.tables import markdown

SHOWN_STATUSES = 3  # why nothing was measured: the first few distinct sentences


class Outcome(StrEnum):
    """What a session answers a CI gate."""

    REGRESSION = "regression"  # B worse on a judged metric: ab exits 1
    NO_REGRESSION = "no regression"
    CANNOT_JUDGE = "cannot judge"  # no judged metric has a verdict: ab exits 0


def session_outcome(verdicts: pd.DataFrame) -> Outcome:
    """The outcome of a session from its verdicts.csv."""
    judged = verdicts[verdicts["judged"]]["verdict"]
    if (judged == Verdict.WORSE.value).any():
        return Outcome.REGRESSION
    if judged.isin([Verdict.NO_CHANGE.value, Verdict.BETTER.value]).any():
        return Outcome.NO_REGRESSION
    return Outcome.CANNOT_JUDGE


def verdict_markdown(directory: Path) -> str:
    """One session as a Markdown section: outcome, arms, sentence, verdict table."""
    record = read_record(directory)
    verdicts = read_verdicts(directory)
    outcome = session_outcome(verdicts)
    table, sentence, _ = verdict_summary(directory)
    scenario = literal(record.scenario or "?")
    lines = [f"### {scenario}: {outcome.value}", ""]
    lines += [f"- {arm_line(label, arm)}" for label, arm in record.arms.items()]
    lines += ["", literal(sentence), ""]
    if outcome is Outcome.CANNOT_JUDGE:
        lines += [unmeasured_line(directory), ""]
    judged = verdicts["judged"].to_numpy(dtype=bool)  # verdict_summary keeps the rows' order
    if judged.any():
        lines.append(markdown(escaped_table(table[judged])))
    if (~judged).any():  # folded: a reviewer reads the judged ones first
        lines += [f"<details><summary>{(~judged).sum()} metrics shown, not judged"
                  "</summary>", "", markdown(escaped_table(table[~judged])), "</details>", ""]
    lines.append(f"Results directory: {cell(directory.name)}\n")
    return "\n".join(lines)


def arm_line(label: str, arm: dict[str, Any]) -> str:
    spec = " ".join(arm.get("spec", [])) or "the topology as it is"
    return f"{literal(label)}: {literal(spec)} ({literal(str(arm.get('overlay', '?')))})"


def unmeasured_line(directory: Path) -> str:
    """Why no judged metric has a verdict: the passes' own status sentences."""
    frame = load_results(directory)
    measured = {state.value for state in State if state.measured}
    unmeasured = frame[~frame[STATE].isin(measured)][STATUS].dropna().drop_duplicates()
    if unmeasured.empty:
        return ("Nothing measured differed enough to judge (every judged metric reads "
                "'no verdict'); see the verdict table.")
    shown = "; ".join(literal(str(status)) for status in unmeasured.head(SHOWN_STATUSES))
    more = len(unmeasured) - SHOWN_STATUSES
    return f"Passes without numbers: {shown}" + (f" (and {more} more)" if more > 0 else "")


def check_summary_file(path: Path) -> None:
    """Refuse an unwritable --summary before a session starts, not after it."""
    try:
        path.open("a", encoding="utf-8").close()
    except OSError as error:
        raise UserError(f"--summary {path} cannot be written ({error.strerror or error}): "
                        "give a file in a directory that exists and you can write to."
                        ) from None


def append_summary(directory: Path, path: Path) -> None:
    """Append the session's section to `path`, as GitHub's job summary is written:
    several sessions, one file."""
    text = verdict_markdown(directory)
    try:
        with path.open("a", encoding="utf-8") as summary:
            summary.write(text + "\n")
    except OSError as error:
        raise UserError(f"--summary {path} cannot be written ({error.strerror or error}); "
                        f"the session's results are in {directory}, and 'vnetbench ab' "
                        "wrote its verdicts there (verdicts.csv).") from None
