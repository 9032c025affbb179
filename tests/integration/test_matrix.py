"""`vnetbench matrix --quick` on baseline, with a reference method: a results
directory that report and compare (against itself: no change) accept; the cells of
one shape (throughput, transactions, loaded_latency) on one stack, each with its own
rows, raw folder, state and seconds.

Its length is --quick's (runs/matrix.py QUICK_SETTINGS): 2 passes a cell at most, the
fewest that keep throughput's and flood's passes apart from the shared stack's
one-pass cells (what the pass assertions below check); 2 s streams, 50 pings. Its cells
are --scenario's: the shared stack's three and flood on a stack of its own, what the
matrix's assertions need; failover and the room (55 s of its 160 here) are a cell as
any other, and run by their own tests (test_failover.py, test_room.py)."""


import json
import re

import pytest
from typer.testing import CliRunner

from tests.integration.conftest import MATRIX_OPTIONS, QuickMatrix, leftovers
from vnetbench.analysis.results import load_results, named
from vnetbench.cli import app

pytestmark = pytest.mark.integration
runner = CliRunner()


def test_quick_matrix_report_and_compare(quick_matrix: QuickMatrix) -> None:
    directory = quick_matrix.directory
    assert directory.parent == quick_matrix.out
    frame = named(load_results(directory))
    assert sorted(frame["pass"].unique()) == [1, 2]
    assert (frame[frame.metric == "tcp_mbit"]["value"] > 0).all()  # the host's CPU: no floor
    header = json.loads((directory / "run.json").read_text())
    assert header["cells"]["throughput/baseline/default"].startswith("completed")
    assert header["cells"]["method/instageni/baseline"].startswith("completed")
    assert "failover/baseline/default" not in header["cells"]  # not asked for
    assert set(frame[frame["method"] == "instageni"]["variant"]) == {
        "1 client (tcp)", "5 clients (tcp)", "1 client (udp)"}  # the short form
    assert header["ended"]
    raw = header["calibration"]["raw_veth_mbit"]  # the first cell: the machine's limit
    # a veth pair's rate is this host's CPU at that moment: only that it moved
    assert raw > 0 and len(header["calibration"]["raw_veth_passes"]) == 2
    shared = [f"{s}/baseline/default" for s in ("throughput", "transactions",
                                                 "loaded_latency")]
    [stack] = header["shared_stacks"]  # one bring-up for the three, in the matrix's order
    assert stack["cells"] == shared
    assert stack["bring_up_s"] > 0 and stack["teardown_s"] > 0 and stack["measure_s"] > 0
    assert header["cells"][shared[0]] == (f"completed ({stack['run']}; shared stack with: "
                                          f"{shared[1]}, {shared[2]})")
    for key in shared:
        timing = header["cell_timings"][key]
        assert timing["measure_s"] > 0 and timing["shared_stack"] == stack["run"]
        assert timing["bring_up_s"] == 0 and timing["teardown_s"] == 0
    timing = header["cell_timings"]["flood/baseline/default"]  # a stack of its own
    assert timing["bring_up_s"] > 0 and timing["measure_s"] > 0 and timing["teardown_s"] > 0
    # each shared cell's rows as a cell alone has them: its own variant and passes
    cells = frame[frame["method"].fillna("") == ""]
    passes = {key: sorted(rows["pass"].unique()) for key, rows in cells.groupby(
        cells["scenario"] + "/" + cells["overlay"] + "/" + cells["variant"])}
    assert passes == {shared[0]: [1, 2], shared[1]: [1], shared[2]: [1],
                      "flood/baseline/default": [1, 2]}
    run_ids = cells.groupby("scenario")["run_id"].unique()
    assert {len(ids) for ids in run_ids} == {1}
    assert len({run_ids[s][0] for s in ("throughput", "transactions", "loaded_latency")}) == 1
    assert cells["run_id"].nunique() == 2  # stacks brought up for 4 cells
    raw_dir = directory / "runs" / stack["run"] / "throughput" / "raw"
    for folder in ("throughput-default", "transactions-default", "loaded-latency-default"):
        assert any((raw_dir / folder).glob("ping-*pass1*.txt")), folder
    for run_id in frame["run_id"].unique():
        assert leftovers(run_id) == []

    again = runner.invoke(app, ["matrix", *MATRIX_OPTIONS, "--resume",
                                "--out", str(quick_matrix.out)])
    assert again.exit_code == 0, again.output
    # throughput, flood, transactions, loaded_latency
    assert "0 cell(s) to run, 4 already done" in again.output
    assert len(named(load_results(directory))) == len(frame)

    report = runner.invoke(app, ["report", str(directory)])
    assert report.exit_code == 0, report.output
    text = (directory / "report.md").read_text()
    assert "## Against this machine's limit" in text and "## Where the time went" in text
    assert re.search(r"\| throughput/baseline/default +\| stack 1 +\|", text)  # kept on --resume
    assert f"stack 1 (run {stack['run']}): {', '.join(shared)}" in text
    assert "## Method: instageni" in text
    assert re.search(r"\| method/instageni/baseline +\|", text)  # its timing too
    assert f"{raw:.0f} Mbit/s" in text
    compare = runner.invoke(app, ["compare", str(directory), str(directory)])
    assert compare.exit_code == 0
    assert "worse" not in compare.output
