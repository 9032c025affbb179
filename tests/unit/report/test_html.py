"""report.html on a recorded results directory: the same sections as report.md, one
self-contained file (plotly.js inline, nothing fetched), figures whose points carry
their pass, run id and settings, the latency CDF from the raw ping files, and
relative links to each cell's raw files. (tests/integration/test_report_browser.py
opens it in a real browser.)"""

import re
from collections.abc import Callable
from pathlib import Path

from plotly.offline import get_plotlyjs_version
from typer.testing import CliRunner

from tests.conftest import RUN_ID
from tests.pages import Page
from vnetbench.cli import app
from vnetbench.measure.ping import parse_ping
from vnetbench.report.document import read_report
from vnetbench.report.figures import report_figures
from vnetbench.report.raw import ping_samples, raw_cells

runner = CliRunner()


def test_report_writes_both_files_and_names_both(results_with_raw: Path) -> None:
    result = runner.invoke(app, ["report", str(results_with_raw)])
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    assert lines[-2:] == [f"report: {results_with_raw / 'report.md'}",
                          f"report: {results_with_raw / 'report.html'}"]


def test_html_has_report_mds_sections_in_order(results_with_raw: Path) -> None:
    runner.invoke(app, ["report", str(results_with_raw)])
    markdown = (results_with_raw / "report.md").read_text()
    titles = [line.lstrip("#").strip() for line in markdown.splitlines()
              if re.match(r"^#{1,3} ", line)]
    page = Page((results_with_raw / "report.html").read_text())
    assert page.headings == titles
    assert titles[1:3] == ["Summary", "Headline plots"]  # the answer, then its plots
    assert titles.index("Headline plots") < titles.index("Results")
    assert "Raw files" in titles and titles[-1] == "More plots"


def test_html_is_self_contained(results_with_raw: Path) -> None:
    runner.invoke(app, ["report", str(results_with_raw)])
    text = (results_with_raw / "report.html").read_text()
    page = Page(text)
    assert page.fetched == []  # no script, image or style from anywhere
    assert f"* plotly.js v{get_plotlyjs_version()}" in text  # the library, inline
    assert text.count("* plotly.js v") == 1  # once, not once per figure
    assert all(not re.match(r"^[a-z]+:", href) for href in page.links
               if not href.startswith("#")), page.links  # relative links only


def test_raw_files_linked_relative_and_present(results_with_raw: Path) -> None:
    runner.invoke(app, ["report", str(results_with_raw)])
    page = Page((results_with_raw / "report.html").read_text())
    raw = [href for href in page.links if not href.startswith("#")]
    assert f"runs/{RUN_ID}/" in raw
    assert f"runs/{RUN_ID}/throughput/raw/ping-pass2.txt" in raw
    assert all((results_with_raw / href).exists() for href in raw)
    assert f"(runs/{RUN_ID}/throughput/raw/iperf3-pass1.json)" in \
        (results_with_raw / "report.md").read_text()


def test_a_directory_without_its_runs_says_so(data_copy: Callable[[str], Path]) -> None:
    directory = data_copy("results-quick")
    report = read_report(directory)
    (cell,) = raw_cells(directory, report.frame, report.record)
    assert cell.run_dir is None and cell.files == []
    runner.invoke(app, ["report", str(directory)])
    assert "not kept beside these results" in (directory / "report.html").read_text()


def test_points_carry_pass_run_and_settings(results_with_raw: Path) -> None:
    report = read_report(results_with_raw)
    figures = {f.name: f.figure for f in report_figures(
        report.frame, report.summary, ping_samples(results_with_raw, report.frame,
                                                   report.record))}
    (tcp,) = figures["tcp_mbit"].data  # one overlay: one trace
    assert tcp.name == "baseline"
    passes = sorted(int(c[0]) for c in tcp.customdata)
    assert passes == [1, 2, 3]
    assert {c[1] for c in tcp.customdata} == {RUN_ID}
    assert "seconds=2.0" in tcp.customdata[0][2] and "pings=50" in tcp.customdata[0][2]
    assert "pass %{customdata[0]}" in tcp.hovertemplate


def test_latency_cdf_from_each_passes_raw_ping(results_with_raw: Path, data_dir: Path) -> None:
    report = read_report(results_with_raw)
    samples = ping_samples(results_with_raw, report.frame, report.record)
    assert [s.pass_no for s in samples] == [1, 2, 3]
    figures = {f.name: f.figure for f in report_figures(report.frame, report.summary,
                                                        samples)}
    lines = figures["cdf-throughput"].data
    expected = sorted(parse_ping((data_dir / "ping-20.txt").read_text()).rtts_ms)
    assert len(lines) == 3
    assert list(lines[0].x) == expected and lines[0].y[-1] == 1.0
    assert [line.showlegend for line in lines] == [True, False, False]  # one entry, baseline


def test_figures_in_the_page_are_the_reports(results_with_raw: Path) -> None:
    runner.invoke(app, ["report", str(results_with_raw)])
    text = (results_with_raw / "report.html").read_text()
    page = Page(text)
    assert page.figures == ["figure-tcp-mbit", "figure-rtt-mean-ms", "figure-cdf-throughput"]
    customdata = page.figure_data("tcp-mbit")[0]["customdata"]
    assert isinstance(customdata, list) and customdata[0][1] == RUN_ID
