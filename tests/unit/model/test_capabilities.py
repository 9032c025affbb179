"""Where a scenario can run is decided from data: the overlays' capabilities and
the scenarios' needs (vnetbench.model.capabilities), in one place."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.unit.deploy.test_render import TWO_SITES, vnet_build
from vnetbench.core.outcome import Applicable, NotApplicable, Unsupported
from vnetbench.model.capabilities import Capability, applicability
from vnetbench.model.topology import Topology, parse_topology
from vnetbench.overlays import OVERLAY_TYPES
from vnetbench.overlays.baseline import Baseline
from vnetbench.overlays.wireguard import WireGuard
from vnetbench.scenarios import SCENARIOS, get_scenario

OVERLAYS = Path(__file__).resolve().parents[3] / "vnetbench" / "overlays"


def topology(overlay: str, **changes: object) -> Topology:
    return parse_topology({**TWO_SITES, "overlay": overlay, **changes}, "t")


def test_no_overlay_names_a_scenario() -> None:
    """An overlay's code compares no value with a scenario's name."""
    named = []
    for path in OVERLAYS.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Compare):
                named += [f"{path.name}:{node.lineno}" for c in ast.walk(node)
                          if isinstance(c, ast.Constant) and c.value in SCENARIOS]
    assert named == []


@pytest.mark.parametrize("name", sorted(OVERLAY_TYPES))
def test_an_overlay_joins_where_it_logs_joins(name: str) -> None:
    overlay = OVERLAY_TYPES[name]
    assert (Capability.JOIN in overlay.capabilities) == (overlay.join_event is not None)


def test_what_an_overlay_lacks_is_not_applicable() -> None:
    assert isinstance(get_scenario("join").applicability(Baseline()), NotApplicable)
    refused = get_scenario("config").applicability(WireGuard())
    assert refused == NotApplicable("wireguard has no central config to change")
    pooled = topology("wireguard", agent_pool=2)
    assert isinstance(get_scenario("throughput").applicability(WireGuard(), pooled),
                      NotApplicable)
    assert isinstance(get_scenario("throughput").applicability(Baseline(), pooled), Applicable)
    tls = topology("wireguard", settings={"tls": True})  # a link feature it has none of
    assert isinstance(get_scenario("join").applicability(WireGuard(), tls), Applicable)


def test_what_a_build_lacks_is_unsupported() -> None:
    plain, full = vnet_build(False), vnet_build(True)
    assert isinstance(get_scenario("config").applicability(plain), Unsupported)
    assert isinstance(get_scenario("config").applicability(full), Applicable)
    limits = topology("vnet", settings={"limits": True})
    assert isinstance(get_scenario("throughput").applicability(plain, limits), Unsupported)
    assert isinstance(get_scenario("flood").applicability(plain, limits), Applicable)


def test_the_first_need_in_declaration_order_says_why() -> None:
    class Lacking:
        name = "x"
        capabilities = frozenset({Capability.RELOAD, Capability.TLS})

        def missing(self, capability: Capability) -> str | None:
            return f"no {capability}"

    assert applicability({Capability.TLS, Capability.RELOAD}, Lacking()) == Unsupported(
        "no reload")


@pytest.mark.parametrize("name", sorted(OVERLAY_TYPES))
def test_an_overlay_has_a_control_plane_where_it_names_its_role(name: str) -> None:
    overlay = OVERLAY_TYPES[name]
    assert (Capability.CONTROL_PLANE in overlay.capabilities) == (
        overlay.control_plane is not None)
