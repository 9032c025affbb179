"""The reference methods: their presets, the settings they need from the overlays
(tunnel MTU, link MTU), the stacks their steps share, and their tables."""

from __future__ import annotations

from ipaddress import IPv4Network
from pathlib import Path

import pytest
import yaml

from vnetbench.analysis.results import ResultSet
from vnetbench.core.outcome import Applicable, State, Unsupported
from vnetbench.core.schema import CellKey, Variant
from vnetbench.declared import catalogue
from vnetbench.deploy.render import render_compose
from vnetbench.errors import UserError
from vnetbench.methods import METHODS, get_method
from vnetbench.model.addressing import plan_addresses
from vnetbench.model.topology import Topology, parse_topology
from vnetbench.overlays import OVERLAY_NAMES, overlay_for
from vnetbench.report.tables import method_table
from vnetbench.runs.method import method_overlays, method_tasks
from vnetbench.runs.plan import stack_groups
from vnetbench.runtime.images import ImageSet

BASE = {"name": "t", "switches": 2, "agents": 2}


def topology(overlay: str = "baseline", links: dict[str, object] | None = None,
             **settings: object) -> Topology:
    return parse_topology({**BASE, "overlay": overlay, "links": links or {},
                           "settings": settings}, "t.yml", overlays=OVERLAY_NAMES)


@pytest.mark.parametrize("name", list(METHODS))
def test_every_step_is_a_valid_topology_and_every_row_a_headline(name: str) -> None:
    method = get_method(name)
    metrics = catalogue()
    for short in (False, True):
        for task in method_tasks(topology(), method, "wireguard", short):
            assert task.topology.overlay == "wireguard" and task.variant
    assert set(method.short_steps) <= {s.label for s in method.steps}
    assert all(metrics.label(row) != row for row in method.rows), "rows print with a label"


def test_unknown_method_is_named_with_the_known_ones() -> None:
    with pytest.raises(UserError, match="vpncloud, libp2p-perf, galaxy42, instageni"):
        get_method("iperf")


def test_steps_that_differ_only_in_what_they_measure_share_a_stack() -> None:
    wireguard = overlay_for(topology("wireguard"))
    instageni = stack_groups(method_tasks(topology(), get_method("instageni"), "wireguard",
                                          short=False), wireguard)
    assert [len(g) for g in instageni] == [4], "clients and UDP need no new containers"
    vpncloud = stack_groups(method_tasks(topology(), get_method("vpncloud"), "wireguard",
                                         short=False), wireguard)
    assert [len(g) for g in vpncloud] == [1, 1, 1, 1], "MTU and encryption are the stack's"


def test_the_native_path_comes_first_unless_left_out() -> None:
    assert method_overlays(["wireguard"], with_baseline=True) == ["baseline", "wireguard"]
    assert method_overlays(["wireguard"], with_baseline=False) == ["wireguard"]


def test_a_tunnel_mtu_beyond_the_overlay_is_fitted_and_said() -> None:
    nebula = topology("nebula", tunnel_mtu=16384)
    adjusted = overlay_for(nebula).adjust(nebula)
    assert adjusted.topology.settings.tunnel_mtu == 8969
    assert "9001-byte buffers" in adjusted.remark and "measured at 8969" in adjusted.remark


def test_wireguard_tunnel_must_fit_the_link_for_its_udp_gso() -> None:
    at_1500 = topology("wireguard", tunnel_mtu=16384)
    assert overlay_for(at_1500).adjust(at_1500).topology.settings.tunnel_mtu == 1420
    jumbo = topology("wireguard", {"site": {"mtu": 9000}, "backbone": {"mtu": 9000}},
                     tunnel_mtu=9000)
    adjusted = overlay_for(jumbo).adjust(jumbo)
    assert adjusted.topology.settings.tunnel_mtu == 8920 and "GSO" in adjusted.remark


def test_an_overlay_whose_mtu_cannot_be_set_refuses_with_why() -> None:
    vnet = topology("vnet", tunnel_mtu=1400)
    refused = overlay_for(vnet).settings_applicability(vnet)
    assert isinstance(refused, Unsupported) and "documents no MTU" in refused.status
    with pytest.raises(UserError, match="Drop tunnel_mtu"):
        overlay_for(vnet).require_supported_settings(vnet)


def test_the_native_path_ignores_tunnel_settings_and_says_so() -> None:
    asked = topology("baseline", tunnel_mtu=1400, encryption=False)
    adjusted = overlay_for(asked).adjust(asked)
    assert adjusted.topology.settings.tunnel_mtu is None
    assert adjusted.topology.settings.encryption is None
    assert "native path" in adjusted.remark
    assert isinstance(overlay_for(asked).settings_applicability(adjusted.topology), Applicable)


@pytest.mark.parametrize("overlay", ["wireguard", "openvpn", "tinc", "nebula"])
def test_the_tunnel_mtu_reaches_each_overlays_config(overlay: str, tmp_path: Path) -> None:
    asked = topology(overlay, tunnel_mtu=1400)
    adapter = overlay_for(asked)
    plan = plan_addresses(asked, "t", IPv4Network("10.189.0.0/16"))
    adapter.write_files(asked, plan, tmp_path)
    text = render_compose(asked, adapter, "t", plan, ImageSet()) + "".join(
        p.read_text() for p in tmp_path.rglob("*") if p.is_file())
    assert any(s in text for s in ("mtu 1400", "tun-mtu 1400", '"mtu": 1400'))


def test_a_segment_mtu_is_set_on_its_networks_and_refused_on_an_agent() -> None:
    jumbo = topology("baseline", {"backbone": {"mtu": 9000}})
    plan = plan_addresses(jumbo, "t", IPv4Network("10.189.0.0/16"))
    networks = yaml.safe_load(render_compose(jumbo, overlay_for(jumbo), "t", plan,
                                             ImageSet()))["networks"]
    mtus = {n["labels"]["vnetbench.segment"]: n["driver_opts"].get(
        "com.docker.network.driver.mtu") for n in networks.values()}
    assert mtus == {"backbone": "9000", "site": None}
    with pytest.raises(UserError, match="an MTU belongs to a segment"):
        parse_topology({**BASE, "agents": [{"name": "a", "switch": "switch1",
                                            "link": {"mtu": 9000}}]}, "t.yml")


def test_method_table_has_a_row_per_step_and_measurement_and_says_why_not() -> None:
    method = get_method("vpncloud")
    results = ResultSet(Path("."))
    first, third = (Variant(method.steps[i].label, method=method.name) for i in (0, 2))
    for overlay, value in (("baseline", 10000.0), ("wireguard", 500.0)):
        results.add(CellKey("r", "throughput", overlay, first), 1,
                    {"tcp_mbit": (value, "Mbit/s")}, {})
    results.add(CellKey("r", "throughput", "wireguard", third), 1, {"skipped": (None, "")}, {},
                status="not supported: encryption cannot be turned off on wireguard",
                state=State.UNSUPPORTED)
    table = method_table(results.frame(), method)
    assert list(table.columns) == ["step", "measurement", "baseline", "wireguard"]
    first = table.iloc[0]
    assert first["measurement"] == "TCP between two agents"
    assert "0.05x native" in first["wireguard"]
    status = table[table["measurement"] == "status"].iloc[0]
    assert status["step"] == method.steps[2].label
    assert "cannot be turned off" in status["wireguard"]


def test_a_step_that_contradicts_the_topology_is_one_paragraph_naming_the_step() -> None:
    with_tls = topology("vnet", tls=True)
    with pytest.raises(UserError, match=r"(?s)step 'MTU 1400, unencrypted'.*contradict"):
        method_tasks(with_tls, get_method("vpncloud"), "vnet", short=True)


def test_a_job_counts_every_pass_of_every_step() -> None:
    assert get_method("instageni").passes(topology(), short=False) == 4 * 3
    assert get_method("instageni").passes(topology(), short=True) == 3 * 1
