"""A metric's dimensions (fault, role, quantile...) are columns of the results: a
pass writes them apart from the metric, results written before (the dimensions in
the metric's name, tests/data/results-named) are split as they are read, and the
readers name each series as before, so old and new results pair."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from vnetbench.analysis.results import CSV, PARQUET, ResultSet, load_results, named
from vnetbench.core.schema import DIMENSIONS, CellKey
from vnetbench.declared import DECLARATIONS, catalogue
from vnetbench.declared.failover import DECLARATION as FAILOVER
from vnetbench.declared.room import DECLARATION as ROOM
from vnetbench.report.compare import compare_directories
from vnetbench.report.export import figures
from vnetbench.report.history import headline_summary

CELL = CellKey("run-1", "failover", "wireguard")


def failover_pass(directory: Path) -> ResultSet:
    results = ResultSet(directory)
    results.add(CELL, 1, FAILOVER.emitted({
        FAILOVER.series("outage_ms", fault="switch-restart"): 120.0,
        FAILOVER.series("outage_ms", fault="backbone-down"): 340.0}), {})
    results.add(CELL, 1, ROOM.emitted({ROOM.series("room_latency_ms", quantile=99.9): 4.0}),
                {})
    results.write()
    return results


def test_a_pass_writes_each_series_as_its_metric_and_dimension_columns(
        tmp_path: Path) -> None:
    failover_pass(tmp_path)
    written = pd.read_parquet(tmp_path / PARQUET)  # the file itself, not upgraded
    assert set(DIMENSIONS) <= set(written.columns)
    assert written[["metric", "fault", "quantile", "value"]].values.tolist() == [
        ["outage_ms", "switch-restart", "", 120.0], ["outage_ms", "backbone-down", "", 340.0],
        ["room_latency_ms", "", "99.9", 4.0]]


def test_the_csv_copy_reads_dimensions_as_text(tmp_path: Path) -> None:
    failover_pass(tmp_path)
    (tmp_path / PARQUET).write_bytes(b"damaged")
    frame = load_results(tmp_path)
    assert frame.loc[frame.metric == "room_latency_ms", "quantile"].tolist() == ["99.9"]


def test_results_written_with_dimensions_in_names_are_split_when_read(
        data_dir: Path) -> None:
    old = pd.read_parquet(data_dir / "results-named" / PARQUET)
    frame = load_results(data_dir / "results-named")
    row = frame[(frame.metric == "outage_ms") & (frame.fault == "backbone-down")]
    assert len(row) == 4  # two passes on two overlays
    assert frame.loc[frame.metric == "room_latency_ms", "quantile"].unique().tolist() == [
        "50", "99.9"]
    assert set(frame.loc[frame.metric == "cpu_percent", "role"]) == {"agent", "switch"}
    assert set(frame.loc[frame.metric == "joined_on", "switch"]) == {"switch1", "switch2"}
    assert "outage_ms_backbone-down" not in set(frame.metric)
    # a metric without dimensions is left as it is, whatever its name looks like
    assert "cpu_sending_agent_percent" in set(frame.metric)
    # and each series' one name is the name it was written under
    assert named(frame).metric.tolist() == old.metric.tolist()


def test_old_and_new_results_pair_series_by_metric_and_dimensions(
        data_copy: Callable[[str], Path], tmp_path: Path) -> None:
    """compare OLD (names) NEW (columns), and history and export of either, see the
    same series."""
    old = data_copy("results-named")
    new = tmp_path / "new"
    new.mkdir()
    shutil.copy(old / "run.json", new / "run.json")
    load_results(old).to_parquet(new / PARQUET, index=False)
    assert "outage_ms" in set(pd.read_parquet(new / PARQUET).metric)
    table = compare_directories(old, new, 5.0, judge_all=True)
    series = named(load_results(old)).query("interval_s != interval_s")
    assert len(table) == len(series.groupby(["scenario", "overlay", "variant", "metric"]))
    assert (table.ratio == 1.0).all()  # each paired with itself, none with another fault
    assert "outage_ms_switch-restart" in set(table.metric)
    assert ([f.name for f in figures(load_results(old), True)]
            == [f.name for f in figures(load_results(new), True)])
    pd.testing.assert_frame_equal(headline_summary(load_results(old)),
                                  headline_summary(load_results(new)))


def test_a_resumed_results_directory_writes_older_rows_with_dimensions(
        data_copy: Callable[[str], Path]) -> None:
    directory = data_copy("results-named")
    results = ResultSet.resume(directory)
    results.add(CELL, 3, FAILOVER.emitted({
        FAILOVER.series("outage_ms", fault="switch-restart"): 99.0}), {})
    results.write()
    written = pd.read_parquet(directory / PARQUET)
    outages = written[written.metric == "outage_ms"]
    assert len(outages) == 9 and (outages.fault != "").all()
    assert (directory / CSV).exists()


def test_a_series_is_emitted_only_with_its_declared_dimensions() -> None:
    assert FAILOVER.series("outage_ms", fault="loss-burst-2") == "outage_ms_loss-burst-2"
    with pytest.raises(KeyError, match="fault"):
        FAILOVER.series("outage_ms")
    with pytest.raises(KeyError, match="fault"):
        FAILOVER.series("outage_ms", role="agent")


def test_every_declared_dimension_is_a_column_and_every_series_name_splits_back() -> None:
    metrics = catalogue()
    names = {m.name for m in metrics}
    for declaration in DECLARATIONS:
        for metric in declaration.metrics:
            assert set(metric.dimensions) <= set(DIMENSIONS), metric.name
            if metric.dimensions:
                values = {d: f"x-{n}.5" for n, d in enumerate(metric.dimensions)}
                name = metrics.series_name(metric.name, values)
                assert name not in names  # a series' name is no other metric's
                assert metrics.split(name) == (metric.name, values)


def test_a_series_label_fills_its_dimensions_and_the_metric_s_own_keeps_its_fields() -> None:
    metrics = catalogue()
    assert metrics.label("outage_ms_loss-burst") == "Outage across switches, loss-burst"
    assert metrics.label("outage_ms") == "Outage across switches, {fault}"
