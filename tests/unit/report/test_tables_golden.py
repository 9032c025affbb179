"""The report's tables, `compare`'s, `ab`'s verdicts, `history`'s points and
`export`'s documents made from the recorded results in tests/data are the same,
byte for byte, as the golden files in tests/data/golden-reports (first written
from the results as they were recorded, before dimensions were columns).

A change that moves any of them fails here; if it is meant, check the difference,
then VNETBENCH_UPDATE_GOLDEN=1 rewrites the files."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path

import pandas as pd
import pytest

from vnetbench.analysis.results import load_results
from vnetbench.core.schema import VALUE
from vnetbench.report.ab import verdict_table
from vnetbench.report.compare import compare_frames
from vnetbench.report.document import Table, read_report
from vnetbench.report.export import bencher_document, figures, github_documents
from vnetbench.report.history import headline_summary
from vnetbench.report.tables import markdown

DATA = Path(__file__).parents[2] / "data"
GOLDEN = DATA / "golden-reports"
# recorded results: a quick matrix, a real A/A (baseline, 6 rounds), and results of
# every scenario whose metric names carried a dimension (fault, quantile, role...)
RECORDED = ("results-quick", "ab-aa-baseline", "results-named")


def csv(frame: pd.DataFrame) -> str:
    return frame.to_csv(index=False, float_format="%.6g")


def sections(parts: Iterable[tuple[str, str]]) -> str:
    return "".join(f"## {title}\n\n{text.rstrip()}\n\n" for title, text in parts)


def report_tables(directory: Path) -> str:
    """Every table of the report, then compare (against itself, 10 % slower),
    history's headline summary and export's documents."""
    report = read_report(directory)
    tables = [markdown(b.frame) for b in report.blocks if isinstance(b, Table)]
    frame = load_results(directory)
    slower = frame.assign(**{VALUE: frame[VALUE] * 1.1})
    found = figures(frame, judge_all=True)
    return sections([
        *((f"report table {n}", table) for n, table in enumerate(tables, 1)),
        ("compare", csv(compare_frames(frame, slower, 5.0, judge_all=True))),
        ("history", csv(headline_summary(frame))),
        ("export github", json.dumps({b.value: d for b, d in github_documents(found).items()},
                                     indent=1, sort_keys=True)),
        ("export bencher", json.dumps(bencher_document(found), indent=1, sort_keys=True)),
    ])


def check(text: str, path: Path) -> None:
    if os.environ.get("VNETBENCH_UPDATE_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text(), f"{path} differs: check, then VNETBENCH_UPDATE_GOLDEN=1"


@pytest.mark.parametrize("name", RECORDED)
def test_report_tables_match_golden(name: str, data_copy: Callable[[str], Path]) -> None:
    check(report_tables(data_copy(name)), GOLDEN / f"{name}.md")


def test_ab_verdict_table_matches_golden(data_copy: Callable[[str], Path]) -> None:
    frame = load_results(data_copy("ab-aa-baseline"))
    table = verdict_table(frame, min_effect=0.05, judge_all=True, aa=True)
    check(csv(table), GOLDEN / "ab-aa-baseline-verdicts.csv")
