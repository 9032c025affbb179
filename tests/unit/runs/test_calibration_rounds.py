"""calibrate's two-router path rounds: vnetbench's path and the bare one measured in
turn, the first of each round alternating, each round's figures kept together (the
bare helper's output is a recorded real run, tests/data/bare/)."""

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pandas as pd
import pytest

from vnetbench.measure.bare import parse_bare
from vnetbench.runs import calibration
from vnetbench.runs.targets import path_figures

RECORDED = Path(__file__).parents[2] / "data" / "bare" / "bare-shape-20-50-200.txt"


def test_rounds_alternate_which_path_goes_first(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    ran: list[str] = []
    shape = parse_bare(RECORDED.read_text())

    def testbed(directory: Path, seconds: float, number: int) -> tuple[float, float]:
        ran.append(f"testbed {number}")
        return 0.05 * number, 9000.0

    def bare(runtime: Any, run_id: str, sizes: list[int], seconds: float,
             pings: int) -> Any:
        assert sizes == [2] and pings == 200  # the path only: the smallest shape
        ran.append("bare")
        return shape

    monkeypatch.setattr(calibration, "testbed_path", testbed)
    monkeypatch.setattr(calibration, "bare_shape", bare)
    rounds = calibration.path_rounds(None, tmp_path, 1.0, 3)  # type: ignore[arg-type]
    assert ran == ["testbed 1", "bare", "bare", "testbed 2", "testbed 3", "bare"]
    off = shape.paths["netfilter-off"]
    assert [r.testbed for r in rounds] == [(0.05, 9000.0), (0.1, 9000.0),
                                           (0.05 * 3, 9000.0)]
    assert all(r.bare_off == (off.rtt_mean_ms, off.tcp_mbit) for r in rounds)
    rtt, _ = path_figures(rounds)
    assert rtt.value == pytest.approx(0.1 / (off.rtt_mean_ms or 1))  # the middle round's


def test_the_path_run_is_the_delay_lines_unshaped_reference(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One stack for the path's TCP and the delay's unshaped RTT (each had its own):
    the path run pings as the shaped one does, and the delay's error is against it."""
    ran: list[Any] = []
    rtt = {"calibrate-path": [0.10, 0.12, 0.30], "calibrate-delay": [20.6]}

    def run_scenarios(topology: Any, scenarios: list[Any], out: Path) -> Path:
        ran.append((topology.name, topology.settings.pings, str(topology.links.backbone)))
        return out / topology.name

    def load_results(directory: Path) -> pd.DataFrame:
        values = rtt[directory.name]
        return pd.DataFrame({"metric": ["rtt_mean_ms"] * len(values) + ["tcp_mbit"],
                             "value": [*values, 9000.0]})

    monkeypatch.setattr(calibration, "run_scenarios", run_scenarios)
    monkeypatch.setattr(calibration, "load_results", load_results)
    monkeypatch.setattr(calibration, "read_record", lambda _: SimpleNamespace(
        links=SimpleNamespace(applied={"throughput": {"mechanism": "netem"}})))
    figures, plain = calibration.path_figures(tmp_path, 1.0, 3, 20000.0, 10000.0)
    assert plain == pytest.approx(0.12)  # the median of its passes
    assert figures[0].value == 9000.0
    delay = calibration.delay_figures(tmp_path, plain)
    assert [(name, pings) for name, pings, _ in ran] == [("calibrate-path", 200),
                                                          ("calibrate-delay", 200)]
    assert delay[0].value == pytest.approx(20.6 - 0.12 - 20)
    assert delay[-1].name == "baseline path RTT (mean)" and delay[-1].value == plain
