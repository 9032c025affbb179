"""The report's summary: on a bench of several overlays and scenarios (results-quick
grown, tests/conftest.py), each scenario's lead figures per overlay with the ratio
to the baseline, yes/no for a yes/no metric, no spread for a single pass, why an
overlay has no figure, an A/B's verdicts; report.md and report.html show the same
table first, then the contents and the headline plots, before the tables."""

import re
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from tests.pages import Page
from vnetbench.analysis.results import load_results
from vnetbench.analysis.runrecord import read_record
from vnetbench.cli import app
from vnetbench.core.metrics import Metric
from vnetbench.report.ab import verdict_table, write_verdicts
from vnetbench.report.document import Table, read_report
from vnetbench.report.markdown import anchor
from vnetbench.report.summary import lead_table, natural
from vnetbench.report.tables import headline_table, overlay_cell, summary_table

runner = CliRunner()


def summary_of(report_md: str) -> list[list[str]]:
    """The first pipe table of report.md, cells stripped (header row first)."""
    lines = report_md.split("## Summary", 1)[1].splitlines()
    table = [line for line in lines[:40] if line.startswith("|")]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in table]
    return [rows[0], *rows[2:]]  # the rule line dropped


def test_each_overlay_against_the_baseline(bench_results: Path) -> None:
    report = read_report(bench_results)
    table = lead_table(report.frame, report.summary).set_index("measurement")
    assert list(table.columns) == ["scenario", "baseline", "wireguard", "vnet", "openvpn",
                                   "tinc"]
    tcp = table.loc["TCP between two agents"]
    assert tcp["baseline"] == "19786 Mbit/s ±2 %"  # mean of 19299, 19953, 20107
    assert tcp["wireguard"] == "10882 Mbit/s ±2 %, 0.55x"
    assert tcp["vnet"].endswith(", 0.08x") and tcp["tinc"] == "path dead"
    survived = table.loc["TCP connection survived, switch-restart"]
    assert list(survived) == ["", "yes", "yes", "no", "yes", "-"]  # no ratio for yes/no
    assert table.loc["Outage across switches, switch-restart", "vnet"] == "2300 ms, 192x"
    join = table.loc["Machines joining at once (n20)"]
    assert (join["baseline"], join["wireguard"]) == ("-", "0.41 s")  # one pass: no spread
    assert list(table["scenario"]) == ["throughput", "", "failover", "", "join"]


def test_variants_in_one_cell_against_the_baselines_default(
        make_bench_results: Path) -> None:
    report = read_report(make_bench_results)
    table = lead_table(report.frame, report.summary).set_index("measurement")
    assert table.loc["TCP between two agents", "vnet"] == (
        "plain 1583 Mbit/s ±2 %, 0.08x; tls 1583 Mbit/s ±2 %, 0.08x; "
        "tls-limits 1583 Mbit/s ±2 %, 0.08x")  # against the baseline's default
    assert table.loc["Machines joining at once", "vnet"] == "n100 24 s; n200 24 s; n400 24 s; " \
        "n800 24 s"
    assert table.loc["Config change", "wireguard"] == "17 s"  # its default, unnamed
    assert table.loc["Pings answered under flood", "openvpn"] == "31"  # a count: no unit
    assert table.loc["TCP_RR (transactions/s)", "vnet"] == "24, 2.40x"  # unit in the label
    assert sorted(["n800", "n100", "n20"], key=natural) == ["n20", "n100", "n800"]


def test_markdown_and_html_open_on_the_same_summary(bench_results: Path) -> None:
    result = runner.invoke(app, ["report", str(bench_results)])
    assert result.exit_code == 0, result.output
    markdown = (bench_results / "report.md").read_text()
    page = Page((bench_results / "report.html").read_text())
    assert page.headings[:3] == ["vnetbench results: results-quick", "Summary",
                                 "Headline plots"]
    assert page.tables[0] == summary_of(markdown)
    assert page.figures[:2] == ["figure-tcp-mbit", "figure-rtt-mean-ms"]
    contents = re.findall(r"^- \[(.+)\]\(#(.+)\)$", markdown, re.M)
    sections = re.findall(r"^## (.+)$", markdown, re.M)
    assert [text for text, _ in contents] == sections
    assert markdown.index("- [Summary](#summary)") < markdown.index("## Headline plots")
    assert markdown.index("(throughput.png)") < markdown.index("## Results")
    html_contents = [href.removeprefix("#") for href in page.links if href.startswith("#")]
    ids = re.findall(r'<h2 id="([^"]+)">', page.text)
    assert html_contents == ids and len(ids) == len(sections)  # each section, linked


def test_contents_link_as_github_names_headings() -> None:
    assert anchor("Overlay / baseline") == "overlay--baseline"
    assert anchor("Against this machine's limit") == "against-this-machines-limit"
    assert anchor("Method: iperf3-bidir") == "method-iperf3-bidir"


def test_values_a_person_reads() -> None:
    rows = [{"scenario": "failover", "overlay": "vnet", "variant": "default", "pass": p,
             "metric": metric, "unit": unit, "value": value, "state": "ok"}
            for metric, unit, values in (("tcp_survived_kill", "bool", (1.0, 0.0, 1.0)),
                                         ("lost_kill", "count", (3.0,)))
            for p, value in enumerate(values, 1)]
    rows += [{**rows[-1], "scenario": "join", "metric": "joined", "value": 1.0}]
    summary = summary_table(pd.DataFrame(rows)).set_index(["scenario", "metric"])
    assert summary.loc[("failover", "tcp_survived_kill"), "result"] == "yes in 2 of 3"
    single = summary.loc[("failover", "lost_kill")]
    assert overlay_cell(single, None) == "3 count"  # not "3 count (n 1, CV 0.0 %)"
    assert overlay_cell(summary.loc[("failover", "tcp_survived_kill")], None).startswith(
        "yes in 2 of 3 (n 3, CV")
    headline = headline_table(summary.reset_index()).set_index("Measurement")
    assert headline.loc["Probes lost (10 ms apart), kill (vnet)", "CV"] == "-"


def test_verdicts_of_an_ab_in_the_summary(data_copy: Callable[[str], Path]) -> None:
    directory = data_copy("ab-aa-baseline")
    record = read_record(directory)
    write_verdicts(directory, verdict_table(load_results(directory), 0.05, aa=True), record,
                   aa=True)
    report = read_report(directory)
    table = lead_table(report.frame, report.summary, pd.read_csv(directory / "verdicts.csv"))
    tcp = table.set_index("measurement").loc["TCP between two agents"]
    assert re.fullmatch(r"A 14301 Mbit/s ±3 %; B 14118 Mbit/s ±3 %", tcp["baseline"])
    said = tcp["verdict"]
    assert re.fullmatch(r"(no change|better|worse): B/A \d\.\d{3}, p \d\.\d{3}", said), said
    (first,) = [block for block in report.blocks[:4] if isinstance(block, Table)]
    assert first.frame.equals(table)  # the report opens on it


def test_a_lead_figure_is_a_headline() -> None:
    with pytest.raises(ValueError, match="a lead metric is a headline"):
        Metric("x_ms", "ms", lead=True)


def test_figure_json_holds_no_end_tag(bench_results: Path) -> None:
    frame = pd.read_parquet(bench_results / "results.parquet")
    frame.loc[frame["overlay"] == "openvpn", "overlay"] = "x</script><b>y"
    frame.to_parquet(bench_results / "results.parquet", index=False)
    runner.invoke(app, ["report", str(bench_results)])
    page = Page((bench_results / "report.html").read_text())
    names = [trace["name"] for trace in page.figure_data("tcp-mbit")]
    assert "x</script><b>y" in names and len(page.figures) == 2
