"""make bench's cells, held to what they are: the matrix's table (runs/matrix.py
CELLS) on every overlay, with a vNet build that has its features and one without."""

from __future__ import annotations

import pytest

from tests.unit.deploy.test_render import vnet_build
from vnetbench.model.topology import setting_fields
from vnetbench.overlays import OVERLAY_TYPES
from vnetbench.runs.matrix import CELLS, EVERY, plan_cells
from vnetbench.scenarios import SCENARIOS

TLS_LIMITS = {"tls": {"tls": True, "limits": False}, "plain": {"tls": False, "limits": False},
              "tls-limits": {"tls": True, "limits": True}}
TUNNELS = ("wireguard", "openvpn", "tinc", "nebula")
FAILOVER = {"passes": 1, "failover_window_s": 15}
ROOM = {"machines": 20, "seconds": 3, "passes": 2}
ROOM_PAIR = {"passes": 1, "seconds": 3}  # transactions' and loaded_latency's


def cells_expected(plain: bool) -> list[tuple[str, dict[str, object]]]:
    """The seed's cells: vNet's join, config and flood run plain on a build without TLS."""
    suffix, tls = ("-plain", {"tls": False}) if plain else ("", {})
    return [
        ("throughput/baseline/default", {}),
        *((f"throughput/vnet/{name}", overrides) for name, overrides in TLS_LIMITS.items()),
        *((f"throughput/{overlay}/default", {}) for overlay in TUNNELS),
        *((f"join/vnet/n{n}{suffix}", {"machines": n, **tls}) for n in (100, 200, 400, 800)),
        *((f"join/{overlay}/n{n}", {"machines": n}) for overlay in TUNNELS for n in (20, 50)),
        *((f"config/vnet/n{n}{suffix}", {"machines": n, **tls}) for n in (300, 5000)),
        ("flood/baseline/default", {}),
        (f"flood/vnet/default{suffix}", tls),
        *((f"flood/{overlay}/default", {}) for overlay in TUNNELS),
        ("failover/baseline/default", FAILOVER),
        (f"failover/vnet/default{suffix}", {**FAILOVER, **tls}),
        *((f"failover/{overlay}/default", FAILOVER) for overlay in TUNNELS),
        ("room/baseline/n20", ROOM),
        (f"room/vnet/n20{suffix}", {**ROOM, **tls}),
        *((f"room/{overlay}/n20", ROOM) for overlay in TUNNELS),
        *(cell for scenario in ("transactions", "loaded_latency") for cell in (
            (f"{scenario}/baseline/default", ROOM_PAIR),
            (f"{scenario}/vnet/default{suffix}", {**ROOM_PAIR, **tls}),
            *((f"{scenario}/{overlay}/default", ROOM_PAIR) for overlay in TUNNELS))),
    ]


@pytest.mark.parametrize("features", [True, False])
def test_the_matrix_runs_the_seeds_cells(features: bool) -> None:
    overlays = [vnet_build(features) if name == "vnet" else kind()
                for name, kind in OVERLAY_TYPES.items()]
    cells = plan_cells(overlays, list(SCENARIOS.values()))
    assert [(c.key, c.overrides) for c in cells] == cells_expected(not features)
    assert len(cells) == 52


def test_the_table_names_scenarios_overlays_and_settings_that_exist() -> None:
    assert set(CELLS) <= set(SCENARIOS)
    assert "transfer" not in CELLS  # a method's own
    for rows in CELLS.values():
        assert set(rows) <= {EVERY, *OVERLAY_TYPES}
        for variants in rows.values():
            for overrides in variants.values():
                assert set(overrides) <= set(setting_fields())


def test_quick_runs_a_sweep_of_sizes_at_its_smallest_and_every_other_cell() -> None:
    overlays = [vnet_build(True) if name == "vnet" else kind()
                for name, kind in OVERLAY_TYPES.items()]
    full = [c.key for c in plan_cells(overlays, list(SCENARIOS.values()))]
    quick = [c.key for c in plan_cells(overlays, list(SCENARIOS.values()), quick=True)]
    dropped = sorted(set(full) - set(quick))
    # join: every overlay's n50 and vNet's 200-800; config: vNet's n5000 (its n300 stays)
    assert dropped == sorted([*(f"join/{o}/n50" for o in TUNNELS), "config/vnet/n5000",
                              *(f"join/vnet/n{n}" for n in (200, 400, 800))]), dropped
    assert "join/vnet/n100" in quick and "config/vnet/n300" in quick
    assert [k for k in full if k in quick] == quick  # the same order, nothing added
