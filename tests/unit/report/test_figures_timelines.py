"""The timelines and running sums scenarios declare (vnetbench/declared/), drawn by both
reports: failover's per fault (recorded, tests/data/results-named), the room's and the
stream's under a schedule of faults (report.html drew them alone before), transfer's
bytes over time inside a method's section and outside one."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd

from vnetbench.analysis.results import ResultSet, load_results
from vnetbench.core.schema import CellKey, Variant
from vnetbench.declared import DECLARED
from vnetbench.declared.declaration import Cumulative, Timeline
from vnetbench.report.document import read_report
from vnetbench.report.figures import report_figures, series_figures
from vnetbench.report.markdown import build_report
from vnetbench.report.plots import draw_schedule_timeline, write_method_plots
from vnetbench.report.tables import summary_table


def declared(scenario: str, kind: type) -> Any:
    (spec,) = [f for f in DECLARED[scenario].figures if isinstance(f, kind)]
    return spec


def html_figures(frame: pd.DataFrame) -> dict[str, Any]:
    return {f.name: f.figure for f in report_figures(frame, summary_table(frame), [])}


def test_failover_s_recorded_timelines_in_both_reports(
        data_copy: Callable[[str], Path]) -> None:
    directory = data_copy("results-named")
    path, _ = build_report(directory)
    text = path.read_text()
    for overlay in ("baseline", "wireguard"):
        assert f"![failover-{overlay}-timeline](failover-{overlay}-timeline.png)" in text
        assert (directory / f"failover-{overlay}-timeline.png").stat().st_size > 0
    frame = load_results(directory)
    figure = html_figures(frame)["failover-wireguard-backbone-down"]
    assert figure.layout.title.text.startswith(
        "failover on wireguard: share of 10 ms probes answered, backbone-down")
    assert figure.layout.yaxis.title.text == "share of probes answered"
    # the fault took effect at 1.5 s in both passes; its lift was never stamped
    assert [(s.x0, s.line.color) for s in figure.layout.shapes] == [
        (1.5, "red"), (1.5, "red")]


def faults_under_a_stream(directory: Path) -> pd.DataFrame:
    results = ResultSet(directory)
    for overlay in ("wireguard", "baseline"):
        cell = CellKey("r", "throughput", overlay, Variant("default"))
        for pass_no in (1, 2):
            results.add(cell, pass_no, {"stream_fault_at_s_loss-burst": (1.0, "s"),
                                        "stream_fault_end_s_loss-burst": (2.0, "s")}, {})
            for tenth in range(1, 31):
                results.add(cell, pass_no, {"stream_timeline_mbit": (800.0 + tenth, "Mbit/s")},
                            {}, columns={"interval_s": tenth / 10})
    results.write()
    return results.frame()


def test_a_stream_under_faults_in_both_reports(tmp_path: Path) -> None:
    frame = faults_under_a_stream(tmp_path)
    figure = html_figures(frame)["throughput-faults-wireguard"]
    assert [t.name for t in figure.data] == ["pass 1", "pass 2"]
    assert figure.layout.yaxis.title.text == "stream rate per 100 ms (Mbit/s)"
    marks = [(s.x0, s.line.color) for s in figure.layout.shapes]
    assert marks == [(1.0, "red"), (2.0, "green")]  # once per overlay, not per pass
    text = build_report(tmp_path)[0].read_text()
    assert "![throughput-faults-wireguard-timeline](throughput-faults-wireguard-timeline.png)" \
        in text
    assert (tmp_path / "throughput-faults-baseline-timeline.png").stat().st_size > 0


def test_report_md_s_schedule_timeline_marks_and_names_each_event(tmp_path: Path) -> None:
    results = ResultSet(tmp_path)
    cell = CellKey("r", "room", "wireguard", Variant("default"))
    results.add(cell, 1, {"room_fault_at_s_backbone-flap": (1.0, "s"),
                          "room_fault_end_s_backbone-flap": (1.9, "s"),
                          "room_fault_at_s_churn-2": (2.2, "s")}, {})
    for tenth in range(1, 31):
        results.add(cell, 1, {"room_timeline_p99_ms": (5.0 + tenth, "ms")}, {},
                    columns={"interval_s": tenth / 10})
    ((overlay, figure),) = draw_schedule_timeline(results.frame(),
                                                  declared("room", Timeline))
    try:
        axes = figure.axes[0]
        assert overlay == "wireguard"
        assert axes.get_title() == "room on wireguard under its faults"
        assert axes.get_ylabel() == "p99 of requests due per 100 ms (ms)"
        (line, *marks) = axes.get_lines()
        assert list(line.get_ydata()) == [5.0 + t for t in range(1, 31)]
        assert sorted((m.get_xdata()[0], m.get_color()) for m in marks) == [
            (1.0, "red"), (1.9, "green"), (2.2, "red")]
        assert sorted(t.get_text() for t in axes.texts) == ["backbone-flap", "churn-2"]
    finally:
        plt.close(figure)


def bytes_moved(directory: Path, method: str) -> pd.DataFrame:
    results = ResultSet(directory)
    for overlay in ("baseline", "wireguard"):
        for second in (1.0, 2.0, 3.0):
            results.add(CellKey("r", "transfer", overlay, Variant("unshaped", method=method)),
                        1, {"upload_interval_bytes": (2**20, "bytes"),
                            "download_interval_bytes": (2**19, "bytes")}, {},
                        columns={"interval_s": second})
    results.write()
    return results.frame()


def test_a_method_s_bytes_over_time_in_both_reports(tmp_path: Path) -> None:
    frame = bytes_moved(tmp_path, "libp2p-perf")
    assert [p.name for p in write_method_plots(frame, tmp_path, "libp2p-perf")] == [
        "libp2p-perf-unshaped-bytes.png"]
    (figure,) = series_figures(frame, "libp2p-perf")
    assert [t.line.dash for t in figure.figure.data] == ["solid", "dash"] * 2
    assert [list(t.y) for t in figure.figure.data][:2] == [[1.0, 2.0, 3.0], [0.5, 1.0, 1.5]]
    assert "MiB downloaded" in figure.figure.data[1].hovertemplate
    assert report_figures(frame, summary_table(frame), []) == []  # a method's: its section's


def test_transfer_s_bytes_over_time_outside_a_method(tmp_path: Path) -> None:
    """A plain transfer run's bytes over time: drawn as its declared figure (neither
    report drew it outside a method before)."""
    frame = bytes_moved(tmp_path, "")
    assert list(html_figures(frame)) == ["transfer-unshaped"]
    report = read_report(tmp_path)
    build_report(tmp_path, report)
    assert (tmp_path / "transfer-unshaped-bytes.png").stat().st_size > 0
    spec = declared("transfer", Cumulative)
    assert spec.name == "bytes" and spec.scale == 2**20
