"""run.json (a typed record, written whole or not at all) and the run directory."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from vnetbench.analysis.results import CSV, PARQUET, ResultSet, load_results
from vnetbench.analysis.runrecord import RUN_FILE, RunRecord, read_record, recorded, upgrade
from vnetbench.core.schema import CellKey
from vnetbench.errors import UserError
from vnetbench.files import write_atomic
from vnetbench.runtime.rundir import new_directory

DATA = Path(__file__).parents[2] / "data"


def test_a_failed_write_leaves_the_previous_file_whole(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    RunRecord(status="running", kind="run").save(tmp_path)

    def full_disk(temp: Path) -> None:
        temp.write_text('{"status": "trunc')
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space"):
        write_atomic(path, full_disk)
    assert json.loads(path.read_text())["status"] == "running"
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]  # no temp file left


def test_two_runs_with_one_name_get_two_directories(tmp_path: Path) -> None:
    first = new_directory(tmp_path, "two-sites-20261130-054833-compare")
    second = new_directory(tmp_path, "two-sites-20261130-054833-compare")
    assert first != second and first.is_dir() and second.is_dir()
    assert second.name.endswith("-compare-2")


def test_format_one_headers_read_in_todays_schema(tmp_path: Path) -> None:
    (tmp_path / RUN_FILE).write_text(json.dumps({
        "format_version": 1, "run_id": "r", "overlay": {"name": "wireguard",
                                                          "version": "v", "data_path": "p"}}))
    record = read_record(tmp_path)
    assert record.overlays == {"wireguard": {"version": "v", "data_path": "p"}}
    assert record.kind == "run" and record.run_id == "r"
    assert read_record(tmp_path / "absent").as_json() == {}


@pytest.mark.parametrize("name", ["results-quick", "ab-aa-baseline"])
def test_a_recorded_run_json_reads_and_writes_back_the_same(name: str, tmp_path: Path) -> None:
    """The recorded files load as records and are written again key for key, value for
    value (today's format: only the older one's upgrade added)."""
    given = json.loads((DATA / name / RUN_FILE).read_text())
    record = read_record(DATA / name)
    record.save(tmp_path)
    assert json.loads((tmp_path / RUN_FILE).read_text()) == upgrade(given)


def test_a_record_writes_the_keys_given_or_changed_and_keeps_unknown_ones(
        tmp_path: Path) -> None:
    record = RunRecord.model_validate({"kind": "run", "ended": None, "from_the_future": 1})
    record.timings.append({"scenario": "throughput"})  # a default changed in place
    record.links.checks.setdefault("throughput", [])
    record.save(tmp_path)
    assert json.loads((tmp_path / RUN_FILE).read_text()) == {
        "kind": "run", "ended": None, "from_the_future": 1,
        "timings": [{"scenario": "throughput"}], "links": {"checks": {"throughput": []}}}
    assert read_record(tmp_path).model_extra == {"from_the_future": 1}


def test_a_damaged_record_is_named(tmp_path: Path) -> None:
    (tmp_path / RUN_FILE).write_text('{"status": ')
    with pytest.raises(UserError, match="cannot be read"):
        read_record(tmp_path)
    (tmp_path / RUN_FILE).write_text('[1, 2]')
    with pytest.raises(UserError, match=r"not a run\.json"):
        read_record(tmp_path)
    (tmp_path / RUN_FILE).write_text('{"cells": {"throughput/baseline/default": 3}}')
    with pytest.raises(UserError, match=r"run.json is not a run.json vnetbench wrote \(cells"):
        read_record(tmp_path)


def test_recorded_says_how_it_ended(tmp_path: Path) -> None:
    with recorded(tmp_path, RunRecord(status="running")):
        pass
    assert read_record(tmp_path).status == "completed"
    with pytest.raises(RuntimeError), recorded(tmp_path, RunRecord(status="running")):
        raise RuntimeError("engine gone")
    record = read_record(tmp_path)
    assert record.status == "failed: engine gone" and record.ended
    with pytest.raises(KeyboardInterrupt), recorded(tmp_path, RunRecord(status="running")):
        raise KeyboardInterrupt  # Ctrl-C carries no message
    assert read_record(tmp_path).status == "interrupted (Ctrl-C)"


def test_damaged_parquet_falls_back_to_the_csv(tmp_path: Path) -> None:
    results = ResultSet(tmp_path)
    results.add(CellKey("r", "throughput", "baseline"), 1, {"tcp_mbit": (9000.0, "Mbit/s")}, {})
    results.write()
    (tmp_path / PARQUET).write_bytes(b"PAR1 truncated")
    frame = load_results(tmp_path)
    assert frame["value"].tolist() == [9000.0]
    assert len(ResultSet.resume(tmp_path).rows) == 1
    (tmp_path / CSV).unlink()
    with pytest.raises(UserError, match="cannot be read"):
        load_results(tmp_path)
    assert isinstance(frame, pd.DataFrame)
