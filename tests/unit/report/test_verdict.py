"""The report's verdict lines above its summary (vnetbench/report/verdict.py): the
failed or dead cells, else every pass measured (recorded results: tests/data/
results-named, states altered in a copy); the --slo targets a run kept in run.json,
checked again; the best overlay per lead figure against the next, as a ratio or a
difference (make bench's shape, tests/conftest.py); report.md and report.html show
the same lines first."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from tests.unit.report.test_summary_implausible import passes
from tests.unit.terminal.test_exitstatus import NAMED, fake_run, recorded, with_states
from vnetbench.analysis.results import load_results
from vnetbench.analysis.runrecord import RunRecord, read_record
from vnetbench.cli import app
from vnetbench.core.metrics import Better
from vnetbench.core.outcome import State
from vnetbench.core.schema import METRIC, OVERLAY, SCENARIO, VALUE
from vnetbench.report.document import Heading, Table, Verdicts, read_report
from vnetbench.report.tables import summary_table
from vnetbench.report.verdict import Verdict, best_overlays, best_text, verdict_lines

runner = CliRunner()
FAILED = ("Failed", "none: every pass measured (no pass failed, no path dead).")


def lines_of(frame_dir: Path = NAMED, record: RunRecord | None = None) -> list[Verdict]:
    frame = load_results(frame_dir)
    return verdict_lines(frame, summary_table(frame), record or RunRecord())


def test_every_pass_measured_and_nothing_else_to_say() -> None:
    """results-named: every pass ok, no targets given, one overlay beside the baseline
    (no best to name)."""
    assert [(v.subject, v.text, v.miss) for v in lines_of()] == [(*FAILED, False)]


def test_the_failed_and_dead_cells_are_named_as_a_miss(tmp_path: Path) -> None:
    frame = with_states(load_results(NAMED), "throughput", "wireguard", {1, 2}, State.DEAD)
    frame = with_states(frame, "room", "baseline", {2}, State.FAILED)
    (failed,) = verdict_lines(frame, summary_table(frame), RunRecord())
    assert failed.miss and failed.subject == "Failed"
    assert failed.text == ("3 pass(es) in 2 cell(s): room on baseline: pass 2 failed; "
                           "throughput on wireguard: passes 1, 2 path dead.")


def test_a_long_list_names_the_first_six_and_counts_the_rest() -> None:
    frame = load_results(NAMED)
    for scenario in frame["scenario"].unique():
        for overlay in ("baseline", "wireguard"):
            frame = with_states(frame, scenario, overlay, {1}, State.FAILED)
    (failed,) = verdict_lines(frame, summary_table(frame), RunRecord())
    assert failed.text.startswith("10 pass(es) in 10 cell(s): ")
    assert failed.text.count(": pass 1 failed") == 6
    assert failed.text.endswith("; and 4 more (see Passes without numbers).")


def test_the_targets_run_json_keeps_are_checked_each_miss_named() -> None:
    """tcp_mbit: baseline's median 967.5, WireGuard's 744.2 (tests/unit/analysis/test_slo.py)."""
    missed = lines_of(record=RunRecord(targets=["throughput.tcp_mbit>=800",
                                                "room.p99_ms<=50"]))[1]
    assert (missed.subject, missed.miss) == ("Targets missed", True)
    assert missed.text == "1 of 4: throughput.tcp_mbit>=800 on wireguard: 744.2."
    met = lines_of(record=RunRecord(targets=["throughput.tcp_mbit>=500"]))[1]
    assert (met.subject, met.miss) == ("Targets", False)
    assert met.text == "every one met (throughput.tcp_mbit>=500; 2 cell(s) checked)."


def test_a_run_with_slo_keeps_its_targets_and_its_report_says_the_miss(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    directory = recorded(tmp_path)
    fake_run(monkeypatch, directory)
    result = runner.invoke(app, ["run", "throughput", "room", "--out", str(tmp_path / "o"),
                                 "--slo", "throughput.tcp_mbit>=800,room.p99_ms<=50"])
    assert result.exit_code == 1, result.output
    assert read_record(directory).targets == ["throughput.tcp_mbit>=800",
                                              "room.room_p99_ms<=50"]
    assert runner.invoke(app, ["report", str(directory)]).exit_code == 0
    summary = (directory / "report.md").read_text().split("## Summary", 1)[1]
    assert summary.index("- **Targets missed:** 1 of 4: throughput.tcp_mbit&gt;=800 on "
                         "wireguard: 744.2.") < summary.index("| scenario")
    targets = summary.split("## Targets\n", 1)[1].split("##", 1)[0]
    assert targets.count("| MISSED ") == 1 and targets.count("| met ") == 3


def test_the_best_overlay_of_each_lead_figure_against_the_next(
        make_bench_results: Path) -> None:
    """Made-up figures (10 + 7 per overlay's place) beside results-quick's throughput:
    a rate's best is the highest, a time's the lowest; latency added under load by
    its difference; a yes/no figure has no best; tinc's dead throughput is in no line."""
    report = read_report(make_bench_results)
    lines = best_overlays(report.frame, report.summary)
    assert lines[:3] == [
        "TCP between two agents: nebula, 1.82x wireguard",
        "Mean ping round trip: nebula, 0.62x wireguard (their passes' ranges overlap)",
        "Machines joining at once (n20): wireguard, 0.55x openvpn"]
    assert "Config change: wireguard, 0.71x vnet n300" in lines  # vnet's sizes alone
    assert "Pings answered under flood: nebula, 1.18x tinc" in lines
    assert lines[-1] == ("Latency added under load both ways, p50 (ms): wireguard, -7 ms "
                         "(difference) against vnet")
    assert not any("survived" in line for line in lines)


@pytest.mark.parametrize(("means", "better", "said"), [
    ((0.0, 10.0), Better.LOWER, "a, -10 ms (difference) against b"),  # no ratio of zero
    ((-2.0, 5.0), Better.LOWER, "a, -7 ms (difference) against b"),
    ((40.0, 20.0), Better.HIGHER, "a, 2.00x b"),
    ((20.0, 40.0), Better.LOWER, "a, 0.50x b"),
    ((20.0, 20.0), Better.LOWER, "a and b alike"),
])
def test_a_ratio_only_between_two_positive_figures(means: tuple[float, float],
                                                   better: Better, said: str) -> None:
    records = [{"overlay": name, "variant": "default", "metric": "outage_ms_backbone-down",
                "unit": "ms", "mean": mean, "low": mean, "high": mean, "n": 1}
               for name, mean in zip("ab", means, strict=True)]
    assert best_text(records, better) == said


def test_an_implausible_figure_is_no_ones_best(tmp_path: Path, data_dir: Path) -> None:
    """OpenVPN's TCP_CRR of 6/s (implausible under its 4284/s TCP_RR) is not set
    against WireGuard's (OpenVPN's pass again, its CRR 1000/s, plausible)."""
    frame = passes(tmp_path, data_dir)
    openvpn = frame[(frame[SCENARIO] == "transactions") & (frame[OVERLAY] == "openvpn")]
    wireguard = openvpn.assign(overlay="wireguard", status="ok")
    wireguard.loc[wireguard[METRIC] == "tcp_crr_tps", VALUE] = 1000.0
    frame = pd.concat([frame, wireguard], ignore_index=True)
    lines = best_overlays(frame, summary_table(frame))
    assert not any(line.startswith("TCP_CRR") for line in lines), lines
    assert "TCP_RR (transactions/s): openvpn and wireguard alike" in lines, lines


def test_report_md_and_html_open_on_the_same_lines(make_bench_results: Path) -> None:
    assert runner.invoke(app, ["report", str(make_bench_results)]).exit_code == 0
    report = read_report(make_bench_results)
    at = next(i for i, b in enumerate(report.blocks)
              if isinstance(b, Heading) and b.text == "Summary")
    verdicts, summary = report.blocks[at + 1], report.blocks[at + 2]
    assert isinstance(verdicts, Verdicts) and isinstance(summary, Table)
    assert [v.subject for v in verdicts.lines] == ["Failed",
                                                   "Best overlay (against the next)"]
    markdown = (make_bench_results / "report.md").read_text()
    html = (make_bench_results / "report.html").read_text()
    assert ("- **Failed:** 3 pass(es) in 1 cell(s): throughput on tinc: passes 1, 2, 3 "
            "path dead.") in markdown
    assert ("<li class=\"miss\"><strong>Failed:</strong> 3 pass(es) in 1 cell(s): "
            "throughput on tinc: passes 1, 2, 3 path dead.</li>") in html
    assert ("<li><strong>Best overlay (against the next):</strong> TCP between two agents: "
            "nebula, 1.82x wireguard;") in html
    assert html.index("class=\"verdicts\"") < html.index("<table")
