"""What report.md and report.html say of matrix cells that shared a stack: which cells
shared which stack (and its run), each cell's own measurement, the stack's bring-up
and teardown once; a matrix without shared stacks shows its table as before."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from typer.testing import CliRunner

from tests.pages import Page
from vnetbench.analysis.runrecord import RunRecord, SharedStack, read_record
from vnetbench.cli import app
from vnetbench.report.document import timing_table

runner = CliRunner()
PAIR = [f"{s}/baseline/default" for s in ("throughput", "transactions", "loaded_latency")]


def shared_record() -> RunRecord:
    own = {"measure_s": 0.0, "shared_stack": "run-7"}
    return RunRecord(
        kind="matrix",
        cell_timings={PAIR[0]: {**own, "measure_s": 30.0}, PAIR[1]: {**own, "measure_s": 15.0},
                      PAIR[2]: {**own, "measure_s": 10.0},
                      "flood/baseline/default": {"bring_up_s": 10.0, "measure_s": 20.0,
                                                 "teardown_s": 5.0}},
        shared_stacks=[SharedStack(run="run-7", cells=PAIR, bring_up_s=12.0,
                                   measure_s=56.0, teardown_s=5.0)])


def test_a_shared_stack_is_a_row_of_its_own_and_its_cells_say_so() -> None:
    table = timing_table(shared_record())
    rows = {row["cell"]: row for row in table.to_dict("records")}
    assert list(table.columns[:2]) == ["cell", "stack"]
    assert [rows[c]["stack"] for c in PAIR] == ["stack 1"] * 3
    assert rows[PAIR[1]]["measurement s"] == 15.0 and rows[PAIR[1]]["bring-up s"] == 0.0
    assert rows[PAIR[1]]["testbed share"] == "in stack 1"
    assert rows["flood/baseline/default"]["stack"] == "own"
    assert rows["flood/baseline/default"]["testbed share"] == "43 %"  # 15 of 35 s
    stack = rows["stack 1"]
    assert (stack["bring-up s"], stack["measurement s"], stack["teardown s"]) == (12.0, 56.0,
                                                                                5.0)
    assert stack["total s"] == 73.0 and stack["testbed share"] == "23 %"  # 17 of 73 s


def test_a_matrix_without_shared_stacks_has_no_stack_column() -> None:
    record = RunRecord(cell_timings={"flood/baseline/default": {"measure_s": 20.0}})
    assert "stack" not in timing_table(record).columns


def test_a_single_runs_stack_names_the_cells_that_shared_it() -> None:
    stacks = [{"scenario": "throughput", "passes": [1, 2, 3], "measure_s": 50.0,
               "cells": {cell: 10.0 for cell in PAIR}},
              {"scenario": "flood", "passes": [1], "measure_s": 5.0,
               "cells": {"flood/baseline/default": 5.0}}]
    assert list(timing_table(RunRecord(timings=stacks))["cell"]) == [
        f"throughput passes [1, 2, 3], one stack for: {', '.join(PAIR)}", "flood passes [1]"]


def test_both_reports_name_the_cells_that_shared_each_stack(
        data_copy: Callable[[str], Path]) -> None:
    directory = data_copy("results-quick")
    record = read_record(directory)
    shared = shared_record()
    record.cell_timings, record.shared_stacks = shared.cell_timings, shared.shared_stacks
    record.save(directory)
    result = runner.invoke(app, ["report", str(directory)])
    assert result.exit_code == 0, result.output
    line = ("stack 1 (run run-7): throughput/baseline/default, "
            "transactions/baseline/default, loaded_latency/baseline/default")
    markdown = (directory / "report.md").read_text()
    assert f"- {line}" in markdown and "shared a stack" in markdown
    page = Page((directory / "report.html").read_text())
    assert line in page.text
    rows = {row["cell"]: row for row in page.table_with("testbed share")}
    assert rows[PAIR[2]]["stack"] == "stack 1" and rows["stack 1"]["total s"] == "73.0"
