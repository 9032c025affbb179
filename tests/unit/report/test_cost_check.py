"""`vnetbench cost --check-at` (vnetbench/report/cost_check.py): the prediction interval
against a case worked by hand, Student's t against scipy's, and the check on room
passes at five sizes made from a real 50-machine recording (tests/data/cost-sizes,
README.md there says how)."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pandas as pd
import pytest
import scipy.stats
from typer.testing import CliRunner

from vnetbench.analysis.results import find_results, load_results
from vnetbench.cli import app
from vnetbench.report.cost import cost_points, write_cost
from vnetbench.report.cost_check import check, check_section, missed, predict, t_quantile

SIZES = Path(__file__).parents[2] / "data" / "cost-sizes"
runner = CliRunner()


def points() -> pd.DataFrame:
    frame = pd.concat([load_results(d) for d in find_results([SIZES])], ignore_index=True)
    return cost_points(frame)


@pytest.mark.parametrize("df", [*range(1, 41), 57, 100, 333])
def test_students_t_is_scipys(df: int) -> None:
    assert t_quantile(df) == pytest.approx(scipy.stats.t.ppf(0.975, df), rel=1e-9)


def test_the_interval_is_the_one_worked_by_hand() -> None:
    # y = 0.5 + 0.8 x through (1, 1), (2, 3), (3, 2), (4, 4): residual sum 1.8, s² = 0.9,
    # Sxx = 5; at x0 = 5, ŷ = 4.5 and √(1 + 1/4 + 2.5² / 5) = √2.5, so s·√… = 1.5.
    # t for 2 degrees of freedom solves t / √(2 + t²) = 0.95: t = 0.95 √(2 / 0.0975)
    t = 0.95 * math.sqrt(2 / 0.0975)
    got = predict(pd.Series([1.0, 2, 3, 4]), pd.Series([1.0, 3, 2, 4]), 5.0, 4.0, sizes=4)
    assert got.value == pytest.approx(4.5)
    assert (got.low, got.high) == pytest.approx((4.5 - 1.5 * t, 4.5 + 1.5 * t))
    assert got.inside is True


def test_the_recorded_sizes_predict_300_machines() -> None:
    rows = {r.role: r for r in check(points(), 300)}
    switch = rows["switch"]
    assert switch.points == 12 and switch.memory.inside and switch.cpu.inside
    # the rule's switch grows 0.02 MiB per machine from its recorded 6.5 MiB at 50
    assert switch.memory.value == pytest.approx(11.5, abs=0.3)
    assert not missed(rows.values())


def test_a_measured_value_outside_the_interval_is_said() -> None:
    grown = points()
    at = (grown["machines"] == 300) & (grown["role"] == "switch")
    grown.loc[at, "mib"] *= 1.5  # the switch's memory at 300 not on the small rooms' line
    rows = check(grown, 300)
    switch = next(r for r in rows if r.role == "switch")
    assert switch.memory.inside is False and switch.cpu.inside is True and missed(rows)
    row = next(line for line in check_section(rows, 300).splitlines()
               if line.startswith("| wireguard | switch"))
    assert row.endswith(f"| {switch.memory.measured:.1f} | **no** |")


def test_fewer_than_three_points_below_give_no_interval() -> None:
    two = points()
    two = two[(two["machines"] == 300) | ((two["machines"] == 10) & (two.index < 4))]
    rows = check(two, 300)  # two passes of 10 machines below
    assert all(r.points == 2 and r.cpu.inside is None for r in rows) and not missed(rows)
    assert "no interval (2 point(s) below, 3 needed (n - 2 < 1))" in check_section(rows, 300)


def test_a_figure_not_measured_at_n_is_no_miss() -> None:
    got = predict(pd.Series([1.0, 2, 3]), pd.Series([1.0, 2, 3]), 5.0, math.nan, sizes=3)
    assert got.inside is None and got.why == "not measured at N"


def test_one_size_below_gives_no_slope() -> None:
    one = points()
    rows = check(one[one["machines"].isin([10, 300])], 300)
    assert "one room size below: no slope to extend" in check_section(rows, 300)


def test_the_section_is_written_into_cost_md(tmp_path: Path) -> None:
    frame = pd.concat([load_results(d) for d in find_results([SIZES])], ignore_index=True)
    written = write_cost(frame, lambda: tmp_path, check_at=300)
    assert written is not None and "| 10, 20, 40, 80 |" in written.table  # not 300
    assert "## Predicted at 300 against measured" in (tmp_path / "cost.md").read_text()


def test_a_size_not_measured_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    out = tmp_path / "c"
    result = runner.invoke(app, ["cost", str(SIZES), "--check-at", "250", "--out", str(out)])
    assert result.exit_code == 2 and not out.exists()
    said = " ".join(result.output.split())
    assert said.startswith("error: --check-at 250: ")
    assert "(room sizes found: 10, 20, 40, 80, 300)" in said


def test_a_miss_exits_1_and_a_hit_0(tmp_path: Path) -> None:
    hit = runner.invoke(app, ["cost", str(SIZES), "--check-at", "300", "--out",
                              str(tmp_path / "hit")])
    assert hit.exit_code == 0, hit.output
    grown = tmp_path / "grown"
    shutil.copytree(SIZES, grown)
    frame = pd.read_parquet(grown / "m300" / "results.parquet")
    switch_mib = (frame["metric"] == "mem_load_mib") & (frame["role"] == "switch")
    frame.loc[switch_mib, "value"] *= 1.5
    frame.to_parquet(grown / "m300" / "results.parquet")
    miss = runner.invoke(app, ["cost", str(grown), "--check-at", "300", "--out",
                               str(tmp_path / "miss")])
    assert miss.exit_code == 1, miss.output
    assert "**no**" in (tmp_path / "miss" / "cost.md").read_text()
