"""Golden files: compose/ must equal what the templates render, and every
rendered object carries the run's label."""

import os
from ipaddress import IPv4Network
from pathlib import Path

import pytest
import yaml

from vnetbench.core.outcome import Unsupported
from vnetbench.deploy.render import render_compose
from vnetbench.errors import UserError
from vnetbench.generators.examples import COMPOSE_DIR, EXAMPLE_BLOCKS, render_example
from vnetbench.model.addressing import free_block, plan_addresses
from vnetbench.model.topology import parse_topology
from vnetbench.overlays import OVERLAY_NAMES, overlay_for
from vnetbench.overlays.vnet.adapter import Vnet, VnetFacts
from vnetbench.overlays.vnet.artifacts import VnetImages
from vnetbench.overlays.vnet.profile import load_profile
from vnetbench.runtime.images import ImageSet
from vnetbench.scenarios.throughput import Throughput


@pytest.mark.parametrize("name", sorted(EXAMPLE_BLOCKS))
def test_committed_compose_matches_templates(name: str) -> None:
    committed = (COMPOSE_DIR / f"{name}.yml").read_text()
    assert committed == render_example(name), (
        f"compose/{name}.yml differs from what the templates render: run 'make compose'")


def render(topology_data: dict, run_id: str = "r1", block: str = "10.170.0.0/16") -> dict:
    topology = parse_topology(topology_data, "t.yml")
    plan = plan_addresses(topology, run_id, IPv4Network(block))
    return yaml.safe_load(render_compose(topology, overlay_for(topology), run_id, plan,
                                         ImageSet()))


def test_every_service_and_network_is_labelled_and_networks_internal() -> None:
    compose = render({"name": "t", "switches": 3, "agents": 5}, run_id="run-x")
    assert compose["name"] == "run-x"
    assert len(compose["services"]) == 1 + 3 + 5  # fabric, routers, agents
    for service in compose["services"].values():
        assert service["labels"]["vnetbench.run"] == "run-x"
        assert service.get("privileged") is not True
    for network in compose["networks"].values():
        assert network["labels"]["vnetbench.run"] == "run-x"
        assert network["internal"] is True
        assert len(network["driver_opts"]["com.docker.network.bridge.name"]) <= 15


def test_subnets_inside_block_and_disjoint() -> None:
    compose = render({"name": "t", "switches": 4, "agents": 8}, block="10.171.0.0/16")
    subnets = [IPv4Network(n["ipam"]["config"][0]["subnet"]) for n in compose["networks"].values()]
    block = IPv4Network("10.171.0.0/16")
    assert all(s.subnet_of(block) for s in subnets)
    assert not any(a.overlaps(b) for i, a in enumerate(subnets) for b in subnets[i + 1:])


def test_agents_route_through_their_own_router() -> None:
    compose = render({"name": "t", "switches": 2,
                      "agents": [{"name": "a", "switch": "switch2"}]})
    agent = compose["services"]["a"]
    router = compose["services"]["router-switch2"]
    router_site_ip = router["networks"]["site_switch2"]["ipv4_address"]
    assert f"via {router_site_ip}" in agent["command"][2]
    assert router["sysctls"]["net.ipv4.ip_forward"] == "1"


def test_free_block_skips_used_subnets() -> None:
    used = [IPv4Network(s) for s in ("10.160.5.0/24", "10.161.0.0/16", "172.17.0.0/16")]
    assert free_block(used) == IPv4Network("10.162.0.0/16")


GOLDEN = Path(__file__).resolve().parents[2] / "data" / "golden"
GOLDEN_IMAGES = {"conductor": "golden/vnet-conductor", "switch": "golden/vnet-switch",
                 "agent": "golden/vnet-agent"}
TWO_SITES = {"name": "two-sites", "switches": 2, "agents": 4,
             "overlay_options": {"vnet": {"images": GOLDEN_IMAGES}}}


def vnet_build(features: bool) -> Vnet:
    """A vNet adapter whose facts are given, as a run learns them from the engine."""
    images = VnetImages(GOLDEN_IMAGES, "images named by the topology/command line")
    profile = Vnet({"images": GOLDEN_IMAGES}, VnetFacts(images)).profile
    absent = {f: None if features else f"not supported by this vNet build ({f})"
              for f in profile.features}
    return Vnet({"images": GOLDEN_IMAGES}, VnetFacts(images, None, absent))


TOPOLOGIES = GOLDEN.parent / "topologies"  # inputs; GOLDEN holds what they render to
# Cases whose vNet build facts the test gives (a run learns them from the engine).
VNET_BUILDS: dict[str, bool] = {"vnet-features": True, "vnet-plain": False,
                                "vnet-pools": False}
GOLDEN_CASES = sorted(p.stem for p in TOPOLOGIES.glob("*.yml"))


READY_MARKER = "/run/vnetbench-ready"


def marker_made_after_removed(service: dict) -> bool:
    """A script that makes the health check's marker removes it first: a restarted
    container keeps its files, and the last start's marker would pass the check at
    once, before this start's set-up (a restart's ready time read early)."""
    script = "\n".join(str(part) for part in service.get("command") or [])
    made = script.find(f"touch {READY_MARKER}")
    return made < 0 or -1 < script.find(f"rm -f {READY_MARKER}") < made


def test_a_script_that_keeps_its_marker_is_found() -> None:
    kept = {"command": ["sh", "-ec", f"ip link set lo up\ntouch {READY_MARKER}\n"]}
    assert not marker_made_after_removed(kept)
    assert marker_made_after_removed({"command": ["sh", "-ec", f"rm -f {READY_MARKER}\n"
                                                  f"touch {READY_MARKER}\n"]})


@pytest.mark.parametrize("case", GOLDEN_CASES)
def test_each_case_renders_its_golden_file(case: str) -> None:
    """tests/data/topologies/<case>.yml renders to tests/data/golden/<case>.yml: rendering
    is pure, the same bytes on any machine, engine or not. VNETBENCH_UPDATE_GOLDEN=1
    rewrites them."""
    path = TOPOLOGIES / f"{case}.yml"
    topology = parse_topology(yaml.safe_load(path.read_text()), str(path))  # no BENCH_*
    overlay = vnet_build(VNET_BUILDS[case]) if case in VNET_BUILDS else overlay_for(topology)
    topology = overlay.adjust(topology).topology
    plan = plan_addresses(topology, "golden", IPv4Network("10.189.0.0/16"))
    text = render_compose(topology, overlay, "golden", plan, ImageSet())
    path = GOLDEN / f"{case}.yml"
    if os.environ.get("VNETBENCH_UPDATE_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text(), f"{path} differs: check, then VNETBENCH_UPDATE_GOLDEN=1"
    compose = yaml.safe_load(text)
    for name, service in compose["services"].items():
        assert service["labels"]["vnetbench.run"] == "golden"
        assert marker_made_after_removed(service), name
        assert service.get("privileged") is not True
        if "devices" in service:  # TUN only with NET_ADMIN, never privileged
            assert service["cap_add"] == ["NET_ADMIN"]


def test_vnet_features_decide_tls_and_credentials() -> None:
    """With the features, TLS variables and the credentials file; without, neither."""
    with_features = (GOLDEN / "vnet-features.yml").read_text()
    plain = (GOLDEN / "vnet-plain.yml").read_text()
    assert "VNET_TLS" in with_features and "VNET_AUTH_FILE" in with_features
    assert "VNET_TLS" not in plain and "VNET_AUTH_FILE" not in plain


def test_vnet_without_tls_runs_plain_and_says_so_unless_tls_was_asked_for() -> None:
    topology = parse_topology({**TWO_SITES, "overlay": "vnet"}, "t")
    plain = vnet_build(False).adjust(topology)
    assert plain.topology.settings.tls is False
    assert plain.remark == "TLS not in this build: measured plain"
    assert vnet_build(True).adjust(topology).topology.settings.tls is True
    asked = parse_topology({**TWO_SITES, "overlay": "vnet", "settings": {"tls": True}}, "t")
    kept = vnet_build(False).adjust(asked)
    assert kept.topology.settings.tls is True and kept.remark == ""
    refused = Throughput().applicability(vnet_build(False), kept.topology)
    assert isinstance(refused, Unsupported)
    assert refused.reason.startswith("not supported by this vNet build")


def test_overlay_options_are_typed_and_checked() -> None:
    with pytest.raises(UserError, match=r"overlay_options.wireguard.*mtu"):
        overlay_for(parse_topology({**TWO_SITES, "overlay": "wireguard",
                                    "overlay_options": {"wireguard": {"mtu": "big"}}}, "t"))
    with pytest.raises(UserError, match=r"overlay_options.openvpn.*privileged"):
        overlay_for(parse_topology({**TWO_SITES, "overlay": "openvpn", "overlay_options": {
            "openvpn": {"privileged": True}}}, "t"))
    with pytest.raises(UserError, match=r"overlay_options.vnet.*images"):
        overlay_for(parse_topology({**TWO_SITES, "overlay": "vnet", "overlay_options": {
            "vnet": {"images": {"agent": "Bad Name; rm -rf /"}}}}, "t"))


HOSTILE = "x\"\n    privileged: true\n  evil:\n    image: $(reboot)"


def test_hostile_strings_never_reach_the_compose_file(tmp_path: Path) -> None:
    """Every free string a topology or a vNet profile carries is validated or quoted:
    hostile values are refused with their key named, and what renders has exactly the
    expected services and keys."""
    for field, value in (("name", HOSTILE), ("switches", [HOSTILE]),
                         ("agents", [{"name": HOSTILE, "switch": "switch1"}])):
        with pytest.raises(UserError, match=field):
            parse_topology({**TWO_SITES, field: value}, "t")
    for options in ({"wireguard": {"mtu": HOSTILE}}, {"openvpn": {"proto": HOSTILE}},
                    {"vnet": {"images": {"agent": HOSTILE}}}, {"tinc": {"x": HOSTILE}}):
        overlay = next(iter(options))
        with pytest.raises(UserError, match=f"overlay_options.{overlay}"):
            overlay_for(parse_topology({**TWO_SITES, "overlay": overlay,
                                        "overlay_options": options}, "t"))
    for key, value in (("programs", {"agent": HOSTILE}), ("tun_interface", HOSTILE),
                       ("images", {"agent": HOSTILE}), ("runtime_image", HOSTILE),
                       ("images", {"switch": "vnet-switch\n"}),
                       ("config", {"path": HOSTILE}),
                       ("features", {"auth_file": {"path": HOSTILE}}),
                       ("features", {"tls": {"environment": {HOSTILE: "1"}}})):
        profile = tmp_path / f"{key}.yml"
        profile.write_text(yaml.safe_dump({key: value}))
        with pytest.raises(UserError, match=key):
            load_profile(profile)
    # What a profile may carry (values of environment variables) is quoted:
    profile = tmp_path / "odd.yml"
    profile.write_text(yaml.safe_dump({"features": {"tls": {"environment": {
        "VNET_TLS": HOSTILE}}}}))
    odd = Vnet({"images": GOLDEN_IMAGES, "profile": str(profile)},
               VnetFacts(VnetImages(GOLDEN_IMAGES, "test"), None,
                         dict.fromkeys(("tls", "auth_file", "reload", "limits"))))
    topology = parse_topology({**TWO_SITES, "overlay": "vnet", "settings": {"tls": True}}, "t")
    plan = plan_addresses(topology, "r", IPv4Network("10.170.0.0/16"))
    compose = yaml.safe_load(render_compose(topology, odd, "r", plan, ImageSet()))
    assert set(compose) == {"name", "services", "networks"}
    assert set(compose["services"]) == {"fabric", "conductor", "switch1", "switch2",
                                        "agent1", "agent2", "agent3", "agent4"}
    for service in compose["services"].values():
        assert "privileged" not in service
    assert compose["services"]["agent1"]["environment"]["VNET_TLS"] == HOSTILE.replace(
        "$", "$$")


def test_image_names_are_quoted_even_past_their_pattern() -> None:
    """A vNet image name is typed (profile and options), and printed quoted besides: a
    hostile one that got past both still adds no key to the compose file."""
    hostile = dict.fromkeys(GOLDEN_IMAGES, HOSTILE)
    overlay = Vnet({"images": GOLDEN_IMAGES}, VnetFacts(VnetImages(hostile, "test")))
    topology = parse_topology({**TWO_SITES, "overlay": "vnet"}, "t")
    plan = plan_addresses(topology, "r", IPv4Network("10.170.0.0/16"))
    compose = yaml.safe_load(render_compose(topology, overlay, "r", plan, ImageSet()))
    assert set(compose["services"]) == {"fabric", "conductor", "switch1", "switch2",
                                        "agent1", "agent2", "agent3", "agent4"}
    for name in ("conductor", "switch1", "agent1"):
        service = compose["services"][name]
        assert service["image"] == HOSTILE.replace("$", "$$")
        assert "privileged" not in service


SERVICE_CASES = [(name, data) for name in OVERLAY_NAMES for data in (
    {"switches": 3, "agents": 5},
    {"switches": 2, "agents": 9, "agent_pool": 4, "start_gate": True})
    if name == "vnet" or "agent_pool" not in data]


@pytest.mark.parametrize(("name", "data"), SERVICE_CASES)
def test_each_overlay_declares_the_services_its_template_renders(name: str,
                                                                 data: dict) -> None:
    """Overlay.services (what validation reserves) is what the templates generate."""
    topology = parse_topology({"name": "t", "overlay": name, **data}, "t")
    overlay = vnet_build(True) if name == "vnet" else overlay_for(topology)
    plan = plan_addresses(topology, "r", IPv4Network("10.170.0.0/16"))
    compose = yaml.safe_load(render_compose(topology, overlay, "r", plan, ImageSet()))
    assert set(compose["services"]) == set(overlay.generated_services(topology))


def test_openvpn_hubs_are_ready_only_with_their_site_link_up() -> None:
    """A hub passed its readiness with only its agents' server listening; the run's
    first pings across sites were then lost until the site link came up (7 of 50)."""
    compose = render({"name": "t", "overlay": "openvpn", "switches": 3, "agents": 3})
    script = {name: "\n".join(service["command"]) for name, service in
              compose["services"].items() if name.startswith("hub-")}
    assert 'sport = :1195' in script["hub-switch1"]  # the first hub serves the site links
    assert "dev tun1" not in script["hub-switch1"]
    for other in ("hub-switch2", "hub-switch3"):  # the others are its clients
        assert "show dev tun1" in script[other] and "1195" not in script[other]
    alone = render({"name": "t", "overlay": "openvpn", "switches": 1, "agents": 2})
    assert "tun1" not in "\n".join(alone["services"]["hub-switch1"]["command"])
    assert "1195" not in "\n".join(alone["services"]["hub-switch1"]["command"])


@pytest.mark.parametrize(("options", "clients", "site"), [
    ({}, True, True), ({"nodelay": False}, False, False), ({"proto": "udp"}, False, True)])
def test_openvpn_sets_tcp_nodelay_on_its_tcp_links(tmp_path: Path, options: dict,
                                                   clients: bool, site: bool) -> None:
    """Captured on OpenVPN's default (Nagle on its TCP links): each packet sent behind
    another waited ~44 ms for the peer's delayed ACK, TCP_CRR 5/s; with tcp-nodelay
    1,392-2,079/s. The site link is always TCP; the agents' links when proto is tcp."""
    topology = parse_topology({"name": "t", "overlay": "openvpn", "switches": 2, "agents": 2,
                               "overlay_options": {"openvpn": options}}, "t.yml")
    plan = plan_addresses(topology, "r1", IPv4Network("10.170.0.0/16"))
    overlay_for(topology).write_files(topology, plan, tmp_path)
    hub = tmp_path / "openvpn" / "hub-switch1"
    assert ("tcp-nodelay" in (hub / "clients.conf").read_text().splitlines()) is clients
    assert ("tcp-nodelay" in (hub / "site.conf").read_text().splitlines()) is site
