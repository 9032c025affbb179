"""`ab --summary FILE`: a session's outcome and verdicts as Markdown for a CI job's
summary, on the recorded real A/A (tests/data/ab-aa-baseline: the baseline path, 6
rounds) as it is, with arm B's TCP rate cut (a regression), and with every pass dead
(nothing to judge)."""

from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.recorded_ab import recorded_session, session_copy
from vnetbench.cli import app
from vnetbench.report.ab import read_verdicts
from vnetbench.report.gate_summary import Outcome, session_outcome, verdict_markdown

runner = CliRunner()


@pytest.fixture
def aa(tmp_path: Path) -> Path:
    return recorded_session(session_copy(tmp_path, "aa"))


@pytest.fixture
def regression(tmp_path: Path) -> Path:
    return recorded_session(session_copy(tmp_path, "regression"), b_tcp_factor=0.8)


@pytest.fixture
def dead(tmp_path: Path) -> Path:
    return recorded_session(session_copy(tmp_path, "dead"), state="path dead")


def table_rows(text: str) -> dict[str, list[str]]:
    """The Markdown table's rows by their first cell."""
    rows = [[c.strip() for c in line.strip("|").split(" | ")]
            for line in text.splitlines() if line.startswith("| ")]
    return {row[0]: row for row in rows}


def test_an_a_a_is_no_regression_with_its_arms_sentence_and_table(aa: Path) -> None:
    text = verdict_markdown(aa)
    assert text.startswith("### throughput: no regression\n")
    assert "- A: the topology as it is (baseline)" in text
    assert "4 of 4 judged metrics no change" in text
    rows = table_rows(text)
    assert rows["metric"][:3] == ["metric", "unit", "A"]
    assert rows["throughput/tcp_mbit"][-2] == "no change"
    assert rows["throughput/tcp_retransmits"][-2].startswith("shown, not judged")
    # the judged metrics first; the 12 shown, not judged folded below them
    folded = text.index("<details><summary>12 metrics shown, not judged</summary>")
    assert text.index("| throughput/tcp_mbit ") < folded
    assert text.index("| throughput/tcp_retransmits ") > folded


def test_a_cut_tcp_rate_is_a_regression_naming_the_metric(regression: Path) -> None:
    assert session_outcome(read_verdicts(regression)) is Outcome.REGRESSION
    text = verdict_markdown(regression)
    assert text.startswith("### throughput: regression\n")
    assert "- B: backbone.rate=80mbit (baseline)" in text
    assert "Worse: throughput/tcp_mbit." in text
    ratio = table_rows(text)["throughput/tcp_mbit"][4]
    # the recorded A/A's own B/A (0.983) times the cut
    assert float(ratio.split()[0]) == pytest.approx(0.983 * 0.8, abs=0.002), ratio


def test_nothing_measured_cannot_be_judged_and_says_why_escaped(dead: Path) -> None:
    assert read_verdicts(dead).empty  # an empty verdicts.csv is read, not refused
    assert session_outcome(read_verdicts(dead)) is Outcome.CANNOT_JUDGE
    text = verdict_markdown(dead)
    assert text.startswith("### throughput: cannot judge\n")
    assert "Passes without numbers: path dead: 0 of 200 pings answered" in text
    assert "<img" not in text and "&lt;img" in text  # a status is data, never markup
    assert "metric |" not in text  # no table without rows


@pytest.fixture
def ab_returns(monkeypatch: pytest.MonkeyPatch) -> Callable[[Path], list[Path]]:
    """`ab` with its session replaced by a recorded directory (no engine)."""
    def use(directory: Path) -> list[Path]:
        ran: list[Path] = []
        def run_ab(*args: object, **kwargs: object) -> Path:
            ran.append(directory)
            return directory
        monkeypatch.setattr("vnetbench.runs.ab.run_ab", run_ab)
        return ran
    return use


def test_ab_appends_a_section_per_session_and_keeps_its_exit_status(
        regression: Path, dead: Path, tmp_path: Path,
        ab_returns: Callable[[Path], list[Path]]) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("## vNet gate\n\n")
    ab_returns(regression)
    result = runner.invoke(app, ["ab", "throughput", "--summary", str(summary)])
    assert result.exit_code == 1, result.output
    ab_returns(dead)
    result = runner.invoke(app, ["ab", "throughput", "--summary", str(summary)])
    assert result.exit_code == 0, result.output  # cannot judge does not fail a gate
    text = summary.read_text()
    assert text.startswith("## vNet gate\n\n### throughput: regression\n")
    assert text.index("### throughput: regression") < text.index("### throughput: cannot judge")


def test_an_unwritable_summary_is_refused_before_the_session(
        aa: Path, tmp_path: Path, ab_returns: Callable[[Path], list[Path]]) -> None:
    ran = ab_returns(aa)
    result = runner.invoke(app, ["ab", "throughput", "--summary",
                                 str(tmp_path / "missing" / "summary.md")])
    assert result.exit_code == 2, result.output
    assert "--summary" in result.output and "Traceback" not in result.output
    assert ran == []
