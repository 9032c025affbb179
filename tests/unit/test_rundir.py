"""run.json and the run directory: one schema, written whole or not at all."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from vnetbench.errors import UserError
from vnetbench.files import write_atomic
from vnetbench.results import CSV, PARQUET, ResultSet, load_results
from vnetbench.rundir import (
    RUN_FILE,
    new_directory,
    read_header,
    recorded,
    save_header,
)


def test_a_failed_write_leaves_the_previous_file_whole(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    save_header(tmp_path, {"status": "running", "kind": "run"})

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
    header = read_header(tmp_path)
    assert header["overlays"] == {"wireguard": {"version": "v", "data_path": "p"}}
    assert header["kind"] == "run"
    assert read_header(tmp_path / "absent") == {}


def test_a_damaged_header_is_named(tmp_path: Path) -> None:
    (tmp_path / RUN_FILE).write_text('{"status": ')
    with pytest.raises(UserError, match="cannot be read"):
        read_header(tmp_path)


def test_recorded_says_how_it_ended(tmp_path: Path) -> None:
    with recorded(tmp_path, {"status": "running"}):
        pass
    assert read_header(tmp_path)["status"] == "completed"
    with pytest.raises(RuntimeError), recorded(tmp_path, {"status": "running"}):
        raise RuntimeError("engine gone")
    header = read_header(tmp_path)
    assert header["status"] == "failed: engine gone" and header["ended"]
    with pytest.raises(KeyboardInterrupt), recorded(tmp_path, {"status": "running"}):
        raise KeyboardInterrupt  # Ctrl-C carries no message
    assert read_header(tmp_path)["status"] == "interrupted (Ctrl-C)"


def test_damaged_parquet_falls_back_to_the_csv(tmp_path: Path) -> None:
    results = ResultSet("r", tmp_path)
    results.add("throughput", "baseline", 1, {"tcp_mbit": (9000.0, "Mbit/s")}, {})
    results.write()
    (tmp_path / PARQUET).write_bytes(b"PAR1 truncated")
    frame = load_results(tmp_path)
    assert frame["value"].tolist() == [9000.0]
    assert len(ResultSet.resume(tmp_path).rows) == 1
    (tmp_path / CSV).unlink()
    with pytest.raises(UserError, match="cannot be read"):
        load_results(tmp_path)
    assert isinstance(frame, pd.DataFrame)
