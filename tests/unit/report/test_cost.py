"""What each machine costs (vnetbench/report/cost.py), on hand-made frames whose costs
are known: a role spending exactly 1.5 ms of CPU per request and 0.02 cores idle, a
switch growing 0.25 MiB per machine, an agent that does not grow."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from vnetbench.report.cost import (
    cost_points,
    cost_table,
    fit,
    role_costs,
    write_cost,
)

RATE = 5.0  # requests per second per machine


def frame(sizes: list[int], passes: int = 3, noise: float = 0.0,
          state: str = "ok") -> pd.DataFrame:
    """Room passes of WireGuard at each size: a switch at 0.02 + 0.0015 x requests/s
    cores and 8 + 0.25 x machines MiB, agents at 5.5 MiB whatever the size."""
    random = np.random.default_rng(7)
    rows = []
    for size in sizes:
        for number in range(1, passes + 1):
            run = f"run-{size}"
            rate = RATE * size * (1 + 0.01 * (number - 2))  # passes a little apart
            cores = 0.02 + 0.0015 * rate + noise * random.standard_normal()
            cells = [("room_requests_per_s", "", rate), ("room_machines", "", size),
                     ("room_cpu_percent", "switch", 100 * cores),
                     ("room_cpu_percent", "agent", 100 * (0.001 * rate)),
                     ("mem_load_mib", "switch", 8 + 0.25 * size),
                     ("mem_load_mib", "agent", 5.5 + 0.05 * (number - 2))]
            rows += [{"run_id": run, "overlay": "wireguard", "pass": number, "metric": m,
                      "role": role, "value": v, "state": state} for m, role, v in cells]
    return pd.DataFrame(rows)


def test_a_role_on_a_line_gives_its_cpu_per_request_and_memory_per_machine() -> None:
    costs = {c.role: c for c in role_costs(cost_points(frame([10, 20, 40])))}
    switch = costs["switch"]
    assert switch.cpu.on_line and switch.cpu.slope * 1000 == pytest.approx(1.5)
    assert switch.cpu.intercept == pytest.approx(0.02)
    assert switch.memory.on_line and switch.memory.slope == pytest.approx(0.25)
    assert switch.machines == (10, 20, 40)
    table = cost_table(list(costs.values()))
    assert "| wireguard | switch | 1.5 ± 0 (R² 1.00) | 0.02 cores |" in table


def test_memory_that_does_not_grow_with_the_room_is_flat_not_off_a_line() -> None:
    agent = {c.role: c for c in role_costs(cost_points(frame([10, 20, 40])))}["agent"]
    # the three passes differ by 0.05 MiB whatever the size: R² is 0, the slope none
    assert agent.memory.flat and not agent.memory.on_line
    assert "5.5 (5.5-5.5)" in cost_table([agent]) and "flat" in cost_table([agent])


def test_one_room_size_is_one_point_whatever_its_passes_rates() -> None:
    # three passes of 20 machines at rates 1 % apart: a fit through them would give a
    # slope from noise, so no cost is offered
    switch = {c.role: c for c in role_costs(cost_points(frame([20])))}["switch"]
    assert not switch.cpu.on_line and switch.cpu.sizes == 1
    assert "not on a line (1 room size(s), 3 needed)" in cost_table([switch])


def test_noisy_points_are_not_summarised_by_a_slope() -> None:
    # noise of 0.1 cores against a line rising 0.0015 x (50 to 200) = 0.23 cores
    switch = {c.role: c for c in role_costs(
        cost_points(frame([10, 20, 40], noise=0.1)))}["switch"]
    assert switch.cpu.r2 < 0.9 and not switch.cpu.on_line
    assert "not on a line (R² " in cost_table([switch])


def test_passes_that_did_not_measure_are_left_out() -> None:
    assert cost_points(frame([10, 20, 40], state="failed")).empty


def test_the_slopes_error_is_the_least_squares_one() -> None:
    x = pd.Series([1.0, 2.0, 3.0, 4.0])
    y = pd.Series([1.0, 3.0, 2.0, 4.0])
    line = fit(x, y, sizes=4)
    # slope 0.8, residuals (-0.6, 0.6, -1.2, 0.0)... s.e. = sqrt(1.8 / 2 / 5)
    assert line.slope == pytest.approx(0.8) and line.slope_error == pytest.approx(
        (1.8 / 2 / 5) ** 0.5)


def test_nothing_is_written_without_a_room_pass(tmp_path: Path) -> None:
    asked: list[Path] = []

    def where() -> Path:
        asked.append(tmp_path)
        return tmp_path

    assert write_cost(frame([10], state="failed"), where) is None and asked == []
    assert write_cost(frame([10, 20, 40]), where) is not None
    assert (tmp_path / "cost.md").is_file() and (tmp_path / "cost.png").is_file()
