"""calibrate's two-router path rounds: vnetbench's path and the bare one measured in
turn, the first of each round alternating, each round's figures kept together (the
bare helper's output is a recorded real run, tests/data/bare/)."""

from pathlib import Path
from typing import Any

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
