"""`matrix --resume`: the newest matrix by its own record, cells cut short run again
whole, and one matrix process per directory."""

import json
from pathlib import Path

import pytest

from vnetbench.analysis.results import ResultSet
from vnetbench.analysis.runrecord import RunRecord
from vnetbench.core.schema import CellKey, Variant
from vnetbench.errors import UserError
from vnetbench.model.topology import parse_topology
from vnetbench.runs.matrix import (
    finished_cells,
    matrix_lock,
    newest_matrix,
    without_unfinished,
    without_workload,
)


def matrix_dir(root: Path, name: str, started: str, kind: str = "matrix") -> Path:
    path = root / name
    path.mkdir()
    (path / "run.json").write_text(json.dumps({"kind": kind, "started": started}))
    return path


def test_resume_finds_the_newest_matrix_whatever_its_date(tmp_path: Path) -> None:
    # begun before midnight, resumed after it: the date in the name is not the key
    yesterday = matrix_dir(tmp_path, "2026-11-30-2cpu", "2026-11-30T23:50:00+00:00")
    matrix_dir(tmp_path, "2026-11-29-2cpu", "2026-11-29T10:00:00+00:00")
    matrix_dir(tmp_path, "two-sites-run", "2026-12-01T00:10:00+00:00", kind="run")
    (tmp_path / "damaged").mkdir()
    (tmp_path / "damaged" / "run.json").write_text("{not json")
    assert newest_matrix(tmp_path) == yesterday
    assert newest_matrix(tmp_path / "none") is None


def test_a_cell_cut_short_is_run_again_whole(tmp_path: Path) -> None:
    record = RunRecord(cells={"throughput/baseline/default": "completed (run-1)",
                              "flood/baseline/default": "stopped: interrupted",
                              "method/instageni/baseline": "completed (run-2)"})
    done = finished_cells(tmp_path, 3, record)
    assert done == {"throughput/baseline/default", "method/instageni/baseline"}
    results = ResultSet(tmp_path)
    for scenario, method, passes in [("throughput", "", 3), ("flood", "", 2),
                                     ("throughput", "instageni", 1)]:
        cell = CellKey("r", scenario, "baseline", Variant(method=method))
        for pass_no in range(1, passes + 1):
            results.add(cell, pass_no, {"x": (1.0, "")}, {})
    kept = without_unfinished(results, done).rows
    assert {(r["scenario"], r["method"]) for r in kept} == {("throughput", ""),
                                                             ("throughput", "instageni")}
    assert len(kept) == 4  # flood's two passes are gone: it runs again from pass 1


def test_two_matrices_on_one_directory_are_refused(tmp_path: Path) -> None:
    with matrix_lock(tmp_path), pytest.raises(
            UserError, match="Another vnetbench matrix is writing"), matrix_lock(tmp_path):
        pass
    with matrix_lock(tmp_path):  # released when the first ends
        pass


def test_the_matrix_leaves_a_topologys_workload_to_run_room() -> None:
    """The matrix's room is a 3 s variant; the contest workload would run 8 minutes in
    each of its passes. Left out, and only that: the rest of the topology stands."""
    base = parse_topology({"name": "t", "switches": 3, "agents": 4, "workload": "contest"},
                          "test", overrides={})
    assert base.workload is not None
    quick = without_workload(base)
    assert quick.workload is None
    assert quick.model_dump(exclude={"workload"}) == base.model_dump(exclude={"workload"})
    plain = parse_topology({"name": "t", "switches": 2, "agents": 2}, "test", overrides={})
    assert without_workload(plain) is plain
