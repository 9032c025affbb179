"""Log axes label every tick with the whole figure it marks (30 ms reads 30, not 3),
on recorded results: the room's request latency CDF of tests/data/results-named
spans 1-500 ms, on a log axis in both report.html and the PNGs."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pytest

from vnetbench.analysis.results import load_results
from vnetbench.report.figures import report_figures
from vnetbench.report.log_axes import log_ticks, matplotlib_log_axis, tick_text
from vnetbench.report.plots import percentile_points
from vnetbench.report.tables import summary_table


def latencies(data_dir: Path) -> list[float]:
    lines = percentile_points(load_results(data_dir / "results-named"), "room_latency_ms")
    return [float(v) for points in lines.values() for v in points.to_numpy()]


@pytest.mark.parametrize(("value", "text"), [
    (30.0, "30"), (1000.0, "1000"), (0.02, "0.02"), (0.1, "0.1"), (0.001, "0.001"),
    (5.0, "5"), (200000.0, "200000")])
def test_a_tick_reads_as_its_figure(value: float, text: str) -> None:
    assert tick_text(value) == text


def test_report_html_labels_the_room_cdf_log_axis_in_full(data_dir: Path) -> None:
    frame = load_results(data_dir / "results-named")
    figures = {f.name: f.figure for f in report_figures(frame, summary_table(frame), [])}
    axis = figures["room-latency-cdf"].layout.xaxis
    assert axis.type == "log"
    assert list(axis.ticktext) == ["1", "2", "5", "10", "20", "50", "100", "200", "500"]
    assert [float(t) for t in axis.ticktext] == list(axis.tickvals)
    assert axis.minor.ticks == "outside"  # the ticks between: marked, not labelled


def test_the_pngs_label_only_whole_figures(data_dir: Path) -> None:
    values = latencies(data_dir)
    figure, axes = plt.subplots()
    try:
        axes.plot(values, range(len(values)))
        matplotlib_log_axis(axes, "x", values)
        figure.canvas.draw()
        low, high = axes.get_xlim()
        shown = [(tick, label.get_text()) for tick, label in
                 zip(axes.get_xticks(), axes.get_xticklabels(), strict=True)
                 if low <= tick <= high]
        assert len(shown) >= 3  # 1, 2 and 5 of each decade the data spans, in full
        assert {text for _, text in shown} <= {"1", "2", "5", "10", "20", "50", "100",
                                               "200", "500"}
        assert all(float(text) == pytest.approx(tick) for tick, text in shown)
        assert {label.get_text() for label in axes.get_xticklabels(minor=True)} <= {""}
    finally:
        plt.close(figure)


def test_an_axis_over_many_decades_labels_each_decade_only() -> None:
    ticks, texts = log_ticks([0.05, 2000.0])  # 4.6 decades
    assert texts == ["0.01", "0.1", "1", "10", "100", "1000", "10000"]
    assert ticks == pytest.approx([0.01, 0.1, 1, 10, 100, 1000, 10000])
    assert log_ticks([0.0, -1.0]) == ([], [])
