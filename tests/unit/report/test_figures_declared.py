"""Each scenario's declared figures (vnetbench/declared/) are the one list both
reports draw: report.md's PNGs (plots.py) and report.html's Plotly figures
(figures.py), by the same names (a timeline one per overlay, or per overlay and
fault; a running sum one per variant), from rows made with the ResultSet the runs
use."""

from pathlib import Path

from vnetbench.analysis.results import ResultSet
from vnetbench.core.schema import CellKey, Variant
from vnetbench.declared import DECLARATIONS
from vnetbench.declared.declaration import (
    AgainstSetting,
    Cumulative,
    Declaration,
    FigureSpec,
    PercentileCdf,
    PingCdf,
    Timeline,
)
from vnetbench.report.figures import report_figures, scenario_figures
from vnetbench.report.plots import write_scenario_plots
from vnetbench.report.raw import PingSample
from vnetbench.report.tables import summary_table

RUN_ID = "two-sites-20261201-000000-abcd"
OVERLAYS = ("baseline", "wireguard")


def add_against(results: ResultSet, declared: Declaration, spec: AgainstSetting) -> None:
    """Two values of the setting, two passes each, per overlay."""
    for number, overlay in enumerate(OVERLAYS, start=1):
        for value in (10, 20):
            cell = CellKey(RUN_ID, declared.name, overlay,
                           Variant(f"n{value}", parameters={spec.setting: value}))
            for pass_no in (1, 2):
                results.add(cell, pass_no, {spec.metric.name: (number * value + pass_no,
                                                               spec.metric.unit)},
                            {spec.setting: value})


def add_percentiles(results: ResultSet, declared: Declaration, spec: PercentileCdf) -> None:
    for overlay in OVERLAYS:
        results.add(CellKey(RUN_ID, declared.name, overlay), 1,
                    {declared.series(spec.metric, quantile=q): (q / 10, "ms")
                     for q in (50, 90, 99)},
                    {})


FAULTS = ("switch-restart", "backbone-down")


def add_timeline(results: ResultSet, declared: Declaration, spec: Timeline) -> None:
    """Two passes per overlay of the metric per 0.1 s, under two faults: one timeline
    per fault (the metric carries it), or one under both."""
    for overlay in OVERLAYS:
        cell = CellKey(RUN_ID, declared.name, overlay)
        for pass_no in (1, 2):
            for number, fault in enumerate(FAULTS):
                results.add(cell, pass_no, {
                    declared.series(spec.start, fault=fault): (1.0 + number, "s"),
                    declared.series(spec.end, fault=fault): (1.5 + number, "s")}, {})
            for fault in FAULTS if spec.per_fault else ("",):
                name = declared.series(spec.metric, fault=fault) if fault else spec.metric
                for tenth in range(1, 31):
                    results.add(cell, pass_no, {name: (tenth / 30, declared.unit(name))}, {},
                                columns={"interval_s": tenth / 10})


def add_running_sums(results: ResultSet, declared: Declaration, spec: Cumulative) -> None:
    for overlay in OVERLAYS:
        for second in (1.0, 2.0):
            results.add(CellKey(RUN_ID, declared.name, overlay), 1,
                        {metric: (spec.scale, declared.unit(metric))
                         for metric, _ in spec.series}, {}, columns={"interval_s": second})


def drawn_names(declared: Declaration, spec: FigureSpec) -> tuple[list[str], list[str]]:
    """The names report.md's PNGs and report.html's figures give a declared figure."""
    match spec:
        case Timeline() if spec.per_fault:
            return ([f"{spec.name}-{o}-timeline" for o in OVERLAYS],
                    [f"{spec.name}-{o}-{f}" for o in OVERLAYS for f in FAULTS])
        case Timeline():
            return ([f"{spec.name}-{o}-timeline" for o in OVERLAYS],
                    [f"{spec.name}-{o}" for o in OVERLAYS])
        case Cumulative():
            return [f"{declared.name}-default-{spec.name}"], [f"{declared.name}-default"]
    return [spec.name], [spec.name]


def ping_samples(declared: Declaration) -> list[PingSample]:
    return [PingSample(declared.name, overlay, "default", pass_no, RUN_ID, None,
                       Path(f"runs/{RUN_ID}/{declared.name}/raw/ping-pass{pass_no}.txt"),
                       (0.4, 0.5, 0.9))
            for overlay in OVERLAYS for pass_no in (1, 2)]


def every_declared_figure(directory: Path
                          ) -> tuple[ResultSet, list[PingSample], list[str], list[str]]:
    """Rows (and ping samples) for every figure any registered scenario declares; the
    names report.md and report.html draw them by."""
    results, samples, md, html = ResultSet(directory), [], [], []
    for declared in DECLARATIONS:
        for spec in declared.figures:
            md_names, html_names = drawn_names(declared, spec)
            md += md_names
            html += html_names
            match spec:
                case AgainstSetting():
                    add_against(results, declared, spec)
                case PercentileCdf():
                    add_percentiles(results, declared, spec)
                case PingCdf():
                    samples += ping_samples(declared)
                case Timeline():
                    add_timeline(results, declared, spec)
                case Cumulative():
                    add_running_sums(results, declared, spec)
    return results, samples, md, html


def test_both_reports_draw_each_declared_figure_by_its_name(tmp_path: Path) -> None:
    results, samples, md_names, html_names = every_declared_figure(tmp_path)
    frame = results.frame()
    drawn_md = [p.stem for p in write_scenario_plots(frame, summary_table(frame), samples,
                                                     tmp_path)]
    drawn_html = [f.name for f in scenario_figures(frame, samples)]
    assert drawn_md == md_names
    assert drawn_html == html_names
    kinds = {type(spec) for declared in DECLARATIONS for spec in declared.figures}
    assert kinds == {AgainstSetting, PingCdf, PercentileCdf, Timeline, Cumulative}
    assert {"join-against-n", "room-p99-by-size", "room-latency-cdf", "cdf-throughput",
            "failover-wireguard-timeline", "room-faults-baseline-timeline",
            "throughput-faults-wireguard-timeline", "transfer-default-bytes"} <= set(md_names)
    assert all((tmp_path / f"{name}.png").stat().st_size > 0 for name in drawn_md)
    every = [f.name for f in report_figures(frame, summary_table(frame), samples)]
    assert all(name in every for name in html_names)  # report.html carries them


def test_a_figure_without_its_data_is_left_out_of_both(tmp_path: Path) -> None:
    """Only join's rows: its figure alone, in both; one machine count draws no line."""
    results, _, _, _ = every_declared_figure(tmp_path)
    frame = results.frame()
    join = frame[frame["scenario"] == "join"]
    assert [p.stem for p in write_scenario_plots(join, summary_table(join), [], tmp_path)] \
        == [f.name for f in scenario_figures(join, [])] == ["join-against-n"]
    single = join[join["set_machines"] == 10]
    assert write_scenario_plots(single, summary_table(single), [], tmp_path) == []
    assert scenario_figures(single, []) == []


def test_the_html_figures_carry_what_they_declare(tmp_path: Path) -> None:
    results, samples, _, _ = every_declared_figure(tmp_path)
    figures = {f.name: f.figure for f in scenario_figures(results.frame(), samples)}
    room = figures["room-p99-by-size"]
    assert room.layout.xaxis.title.text == "machines in the room"
    assert [t.name for t in room.data] == ["baseline", "baseline mean", "wireguard",
                                           "wireguard mean"]
    cdf = figures["room-latency-cdf"]
    assert [list(t.x) for t in cdf.data] == [[5.0, 9.0, 9.9]] * 2
    assert list(cdf.data[0].y) == [0.5, 0.9, 0.99]
    assert len(figures["cdf-throughput"].data) == 4  # a line per pass


def test_figure_names_are_unique_across_scenarios() -> None:
    names = [spec.name for declared in DECLARATIONS for spec in declared.figures]
    assert len(names) == len(set(names))
