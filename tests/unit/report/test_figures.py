"""report.html's other figures (join against N, a sweep, a method's bytes over time)
on rows made with the ResultSet the runs use, and where each layout of run
directory keeps its raw files."""

from pathlib import Path

from vnetbench.analysis.results import ResultSet
from vnetbench.analysis.runrecord import RunRecord
from vnetbench.core.schema import CellKey, Variant
from vnetbench.report.document import read_report
from vnetbench.report.figures import report_figures, series_figures
from vnetbench.report.raw import raw_cells, raw_directory, run_directory
from vnetbench.report.tables import summary_table


def join_and_sweep_rows(directory: Path) -> ResultSet:
    results, run_id = ResultSet(directory), "two-sites-20261201-000000-abcd"
    for overlay, base in (("wireguard", 0.3), ("openvpn", 0.9)):
        for machines in (20, 50):
            cell = CellKey(run_id, "join", overlay,
                           Variant(f"n{machines}", parameters={"machines": machines}))
            for pass_no in (1, 2):
                results.add(cell, pass_no,
                            {"join_seconds": (base * machines / 20 + pass_no / 100, "s")},
                            {"machines": machines})
    for delay in (0, 10, 50):
        swept = Variant(f"backbone.delay={delay}ms", parameters={"backbone_delay_ms": delay})
        results.add(CellKey(run_id, "throughput", "wireguard", swept), 1,
                    {"tcp_mbit": (900.0 - delay, "Mbit/s")}, {"seconds": 2})
    return results


def test_join_against_n_and_a_sweep(tmp_path: Path) -> None:
    frame = join_and_sweep_rows(tmp_path).frame()
    figures = {f.name: f.figure for f in report_figures(frame, summary_table(frame), [])}
    join = figures["join-against-n"]
    assert [t.name for t in join.data] == ["wireguard", "wireguard mean", "openvpn",
                                           "openvpn mean"]
    assert list(join.data[0].x) == [20.0, 20.0, 50.0, 50.0]
    assert sorted(int(c[0]) for c in join.data[0].customdata) == [1, 1, 2, 2]
    assert "machines=20" in join.data[0].customdata[0][2]
    sweep = figures["sweep-var_backbone_delay_ms-tcp_mbit"]
    assert list(sweep.data[1].y) == [900.0, 890.0, 850.0]  # the means, by delay
    assert sweep.layout.xaxis.title.text == "backbone delay (ms each way)"


def test_a_methods_bytes_over_time(tmp_path: Path) -> None:
    results = ResultSet(tmp_path)
    step = Variant("unshaped", method="libp2p-perf")
    for overlay in ("baseline", "wireguard"):
        for second in (1.0, 2.0, 3.0):
            results.add(CellKey("r", "transfer", overlay, step), 1,
                        {"upload_interval_bytes": (2**20, "bytes")}, {},
                        columns={"interval_s": second})
    (figure,) = series_figures(results.frame(), "libp2p-perf")
    assert figure.name == "libp2p-perf-unshaped"
    assert [list(t.y) for t in figure.figure.data] == [[1.0, 2.0, 3.0]] * 2  # MiB moved
    assert [t.legendgroup for t in figure.figure.data] == ["baseline", "wireguard"]


def test_raw_folders_of_each_layout(tmp_path: Path) -> None:
    matrix = tmp_path / "matrix"
    (matrix / "runs" / "r1" / "throughput" / "raw").mkdir(parents=True)
    assert run_directory(matrix, "r1", RunRecord()) == matrix / "runs" / "r1"
    assert raw_directory(matrix / "runs" / "r1", "throughput", "default") == \
        matrix / "runs" / "r1" / "throughput" / "raw"
    single = tmp_path / "r2"  # `vnetbench run`: the run directory is the results'
    (single / "join" / "raw").mkdir(parents=True)
    assert run_directory(single, "r2", RunRecord(run_id="r2")) == single
    shared = tmp_path / "method"  # a method's steps sharing one stack
    (shared / "mtu-1400" / "raw" / "encrypted").mkdir(parents=True)
    (shared / "mtu-1400" / "raw" / "mtu-1400").mkdir()
    assert raw_directory(shared, "throughput", "encrypted") == \
        shared / "mtu-1400" / "raw" / "encrypted"
    assert raw_directory(shared, "throughput", "MTU 1400") == \
        shared / "mtu-1400" / "raw" / "mtu-1400"
    assert run_directory(tmp_path, "gone", RunRecord()) is None


def test_each_cell_of_an_ab_names_its_run(data_dir: Path) -> None:
    report = read_report(data_dir / "ab-aa-baseline")
    found = raw_cells(data_dir / "ab-aa-baseline", report.frame, report.record)
    assert len(found) == 12  # 6 rounds of A and B, a bring-up (run) each
    assert {c.variant for c in found} == {"A", "B"}
    assert all(c.run_dir is None for c in found)  # checked in without its runs


def test_a_room_under_faults_draws_its_timeline_with_each_event_marked(
        tmp_path: Path) -> None:
    results = ResultSet(tmp_path)
    cell = CellKey("r", "room", "wireguard", Variant("default"))
    results.add(cell, 1, {"room_fault_at_s_backbone-flap": (10.0, "s"),
                          "room_fault_end_s_backbone-flap": (19.0, "s"),
                          "room_fault_at_s_churn-2": (22.0, "s")}, {})
    for tenth in range(1, 31):
        results.add(cell, 1, {"room_timeline_p99_ms": (5.0 + tenth, "ms")}, {},
                    columns={"interval_s": tenth / 10})
    frame = results.frame()
    figures = {f.name: f.figure for f in report_figures(frame, summary_table(frame), [])}
    figure = figures["room-faults-wireguard"]
    assert list(figure.data[0].y) == [5.0 + t for t in range(1, 31)]
    lines = [(shape.x0, shape.line.color) for shape in figure.layout.shapes]
    assert sorted(lines) == [(10.0, "red"), (19.0, "green"), (22.0, "red")]
    assert sorted(a.text for a in figure.layout.annotations) == ["backbone-flap", "churn-2"]
