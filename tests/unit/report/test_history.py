"""`vnetbench history` on copies of a recorded results directory made to look like
three builds (tests/conftest.py, history_root), with the recorded A/A's noise floor
(tests/data/ab-aa-baseline/noise.json: TCP ±6.9 %)."""

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from typer.testing import CliRunner

from tests.pages import Page
from vnetbench.cli import app
from vnetbench.report.history import change_text, changes, natural, points, read_builds
from vnetbench.report.options import LabelFrom, Order

runner = CliRunner()


def history(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["history", *args])
    return result.exit_code, result.output


def test_a_fall_beyond_the_noise_floor_is_marked_and_listed(
        history_root: Path, data_dir: Path, tmp_path: Path) -> None:
    code, output = history(str(history_root), "--noise", str(data_dir / "ab-aa-baseline"),
                           "--out", str(tmp_path / "h"))
    assert code == 0, output
    text = (tmp_path / "h" / "history.html").read_text()
    page = Page(text)
    assert output.strip() == f"history: {tmp_path / 'h' / 'history.html'}"
    tcp = page.figure_data("throughput-tcp-mbit")
    assert [t["name"] for t in tcp] == ["baseline", "beyond noise"]
    assert tcp[0]["x"] == ["2026-11-29 10:00", "2026-11-30 10:00", "2026-12-01 10:00"]
    assert tcp[1]["x"] == ["2026-11-30 10:00"]  # the fall, not the 3 % rise after it
    tcp_rows = [r for r in page.table_with("beyond noise") if "TCP between" in r["metric"]]
    assert [(r["to"], r["ratio"], r["noise floor"], r["beyond noise"], r["direction"])
            for r in tcp_rows] == [("2026-11-30 10:00", "0.700", "±6.9 %", "yes", "worse"),
                                   ("2026-12-01 10:00", "1.030", "±6.9 %", "no", "better")]
    assert "1 of 8 changes" in text


def test_without_a_noise_floor_nothing_is_marked(history_root: Path, tmp_path: Path) -> None:
    code, output = history(str(history_root / "build1"), str(history_root / "build2"),
                           "--out", str(tmp_path / "h"))
    assert code == 0, output
    page = Page((tmp_path / "h" / "history.html").read_text())
    assert "Noise floor: none measured" in page.text and "No change is marked." in page.text
    assert [t["name"] for t in page.figure_data("throughput-tcp-mbit")] == ["baseline"]
    assert {r["beyond noise"] for r in page.table_with("beyond noise")} == {
        "no floor measured"}


def test_the_default_out_is_history_in_the_current_directory(
        history_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert history(str(history_root))[0] == 0
    assert (tmp_path / "history" / "history.html").is_file()


def test_order_and_labels(history_root: Path) -> None:
    directories = sorted(p.resolve() for p in history_root.iterdir())
    labels = {directories[0]: "build 10", directories[1]: "build 9", directories[2]: "b 1"}
    by_date = read_builds(directories, LabelFrom.DATE, labels, Order.DATE)
    assert [b.label for b in by_date] == ["build 10", "build 9", "b 1"]
    by_label = read_builds(directories, LabelFrom.DATE, labels, Order.LABEL)
    assert [b.label for b in by_label] == ["b 1", "build 9", "build 10"]
    assert natural("build 9") < natural("build 10")
    same = read_builds(directories, LabelFrom.TOOLS, {}, Order.DATE)
    assert [b.label for b in same] == ["e31e05422aaf", "e31e05422aaf (2)", "e31e05422aaf (3)"]


def test_label_option_names_a_directory(history_root: Path, tmp_path: Path) -> None:
    build2 = history_root / "build2"
    code, output = history(str(history_root), "--label", f"{build2}=my build",
                           "--out", str(tmp_path / "h"))
    assert code == 0, output
    page = Page((tmp_path / "h" / "history.html").read_text())
    labels = page.figure_data("throughput-tcp-mbit")[0]["x"]
    assert isinstance(labels, list) and labels[1] == "my build"


def test_a_change_is_judged_only_against_its_own_floor(history_root: Path) -> None:
    directories = sorted(p.resolve() for p in history_root.iterdir())
    table = points(read_builds(directories, LabelFrom.DATE, {}, Order.DATE))
    found = changes(table, {"throughput/baseline/tcp_mbit": 40.0})
    tcp = found[found["metric"] == "tcp_mbit"]
    assert tcp["beyond_noise"].tolist() == [False, False]  # 30 % is within ±40 %
    assert found[found["metric"] == "rtt_mean_ms"]["beyond_noise"].isna().all()


@pytest.mark.parametrize(("args", "said"), [
    (["build1"], "two or more results directories"),
    (["nowhere", "build1"], "is no results directory"),
    (["build1", "build2", "--label-from", "vnet"], "names no vnet image"),
    (["build1", "build2", "--label", "elsewhere=x"], "give DIR=TEXT"),
    (["build1", "build2", "--noise", "build1"], "holds no noise.json"),
])
def test_bad_input_is_one_paragraph_and_exit_2(history_root: Path, args: list[str],
                                               said: str) -> None:
    given = [str(history_root / a) if not a.startswith("--") and a not in ("vnet",)
             and "=" not in a else a for a in args]
    code, output = history(*given)
    assert code == 2, output
    assert said in output and "Traceback" not in output


def test_an_unknown_label_source_is_refused(history_root: Path) -> None:
    code, output = history(str(history_root), "--label-from", "git")
    assert code == 2 and "--label-from" in output


STEPPED = (1.0, 1.012, 0.991, 1.004, 0.995, 0.9, 0.907, 0.893, 0.902, 0.896)  # -10 % at 6th


@pytest.fixture
def stepped_root(tmp_path: Path) -> Path:
    """Ten days of results-quick, the TCP rate 10 % lower from the sixth on."""
    from tests.conftest import history_build

    root = tmp_path / "stepped"
    for day, factor in enumerate(STEPPED, start=1):
        history_build(root, f"day{day:02}", f"2026-11-{day:02}", factor)
    return root


def test_a_step_is_a_change_point_with_its_label_size_and_p(
        stepped_root: Path, data_dir: Path, tmp_path: Path) -> None:
    code, output = history(str(stepped_root), "--noise", str(data_dir / "ab-aa-baseline"),
                           "--out", str(tmp_path / "h"), "--json")
    assert code == 0, output
    data = json.loads(output)
    tcp = next(s for s in data["series"] if s["metric"] == "tcp_mbit")
    assert tcp["floor_from"] == "noise.json" and tcp["floor_pct"] == pytest.approx(6.93, 0.01)
    assert [p["label"] for p in tcp["points"]][5] == "2026-11-06 10:00"
    [change] = tcp["change_points"]
    assert change["label"] == "2026-11-06 10:00" and change["position"] == 5
    assert change["change_pct"] == pytest.approx(-10, abs=0.5) and change["p"] <= 0.05
    assert change["direction"] == "worse"
    assert not any(s["change_points"] for s in data["series"] if s["metric"] != "tcp_mbit")
    page = Page((tmp_path / "h" / "history.html").read_text())
    marked = page.figure_data("throughput-tcp-mbit")[-1]
    assert marked["name"] == "change point" and marked["x"] == ["2026-11-06 10:00"]
    assert marked["text"] == [f"{change['change_pct']:+.1f} %, p {change['p']:.3f}"]
    [row] = page.table_with("floor")
    assert (row["at"], row["floor"], row["direction"]) == (
        "2026-11-06 10:00", "±6.9 %", "worse")


def test_without_a_noise_floor_change_points_use_the_default_and_say_so(
        stepped_root: Path, tmp_path: Path) -> None:
    code, output = history(str(stepped_root), "--out", str(tmp_path / "h"), "--json")
    assert code == 0, output
    data = json.loads(output)
    assert {s["floor_from"] for s in data["series"]} == {"default"}
    assert data["default_floor_pct"] == 5.0
    page = Page((tmp_path / "h" / "history.html").read_text())
    assert "the default floor of ±5 %" in page.text
    assert [r["floor"] for r in page.table_with("floor")] == ["±5.0 % (default)"]


def test_a_floor_that_is_no_number_is_refused(stepped_root: Path, data_copy: Any) -> None:
    aa = data_copy("ab-aa-baseline")
    noise = json.loads((aa / "noise.json").read_text())
    noise["metrics"]["throughput/baseline/tcp_mbit"]["noise_pct"] = -1
    (aa / "noise.json").write_text(json.dumps(noise))
    code, output = history(str(stepped_root), "--noise", str(aa))
    assert code == 2 and "noise.json cannot be read as a noise floor" in output
    assert "throughput/baseline/tcp_mbit" in output  # the entry named
    assert "Traceback" not in output


def test_no_ratio_from_a_figure_at_or_below_zero_nor_of_a_difference() -> None:
    """Latency added under load across builds (the recorded baseline's -0.024 ms, then
    the issue's 21 ms, #62) and a rate from 0: no ratio, the difference said instead."""
    table = pd.DataFrame([
        {"scenario": "loaded_latency", "overlay": "baseline", "variant": "default",
         "metric": "one_way_added_p50_ms", "unit": "ms", "mean": mean, "position": i,
         "label": f"b{i}"} for i, mean in enumerate((-0.024, 21.0, 25.0))] + [
        {"scenario": "throughput", "overlay": "baseline", "variant": "default",
         "metric": "tcp_mbit", "unit": "Mbit/s", "mean": mean, "position": i,
         "label": f"b{i}"} for i, mean in enumerate((0.0, 900.0, 450.0))])
    found = changes(table, {}).set_index(["metric", "to"])
    for key in [("one_way_added_p50_ms", "b1"), ("one_way_added_p50_ms", "b2"),
                ("tcp_mbit", "b1")]:
        assert pd.isna(found.loc[key, "ratio"]), key
    assert found.loc[("tcp_mbit", "b2"), "ratio"] == 0.5
    said = change_text(found.reset_index().iloc[0].to_dict(), False)
    assert said == ("+21 ms (difference) from b0: no ratio (from zero or below, or a "
                    "difference)")
