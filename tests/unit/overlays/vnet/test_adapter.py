"""vNet adapter pieces on recorded real output: profile, files, events, gate, flood maths."""

from __future__ import annotations

import re
import stat
from collections import Counter
from collections.abc import Callable
from ipaddress import IPv4Network
from pathlib import Path

import pandas as pd
import pytest
import yaml
from cryptography import x509

from vnetbench.deploy.render import render_compose
from vnetbench.engines.base import Source
from vnetbench.errors import UserError
from vnetbench.measure.events import events_frame, last_lines
from vnetbench.measure.iperf import parse_iperf_udp
from vnetbench.model.addressing import plan_addresses
from vnetbench.model.topology import parse_topology
from vnetbench.overlays import overlay_for
from vnetbench.overlays.base import AgentLimits, remove_private_files
from vnetbench.overlays.vnet import Vnet
from vnetbench.overlays.vnet.adapter import VnetFacts
from vnetbench.overlays.vnet.artifacts import (
    VnetImages,
    parse_image_list,
    requested_images,
    with_vnet_options,
)
from vnetbench.overlays.vnet.files import machines_config, topology_config
from vnetbench.overlays.vnet.profile import SHIPPED_PROFILE, load_profile
from vnetbench.runtime.gate import gate_spread, prepare_gate, release_stamp
from vnetbench.runtime.images import ImageSet
from vnetbench.runtime.pki import make_pki
from vnetbench.scenarios.flood import token_bucket_drops
from vnetbench.scenarios.join import JoinOutcome, failure_reasons, pool_size, result_of

DATA = Path(__file__).resolve().parents[3] / "data"
LOGS = DATA / "vnet-logs"


def sources() -> list[Source]:
    roles = {"conductor": "conductor", "switch1": "switch", "switch2": "switch",
             "agent1": "agent", "agent2": "agent", "agent3": "agent"}
    return [Source(name, role, name, (LOGS / f"{name}.log").read_text())
            for name, role in roles.items()]


def test_shipped_profile_loads_and_a_user_file_overrides_only_its_keys(tmp_path: Path) -> None:
    shipped = load_profile()
    assert shipped.ports["conductor"] == 5000
    override = tmp_path / "mine.yml"
    override.write_text("ports: {switch: 7000}\nfeatures: {reload: {available: true}}\n")
    mine = load_profile(override)
    assert mine.ports == {"conductor": 5000, "switch": 7000}
    assert mine.feature("reload").available is True
    assert mine.feature("reload").detect == shipped.feature("reload").detect
    assert mine.events == shipped.events


def test_a_broken_profile_names_the_key(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yml"
    bad.write_text("events: {switch: {ready: '[unclosed'}}\n")
    with pytest.raises(UserError, match=r"events.*switch.ready"):
        load_profile(bad)
    with pytest.raises(UserError, match="no vNet profile"):
        load_profile(tmp_path / "absent.yml")


def test_no_vnet_string_outside_the_profile_and_its_templates() -> None:
    root = SHIPPED_PROFILE.parents[3] / "vnetbench"
    offenders = [p for p in root.rglob("*.py")
                 if "overlays/vnet" not in str(p)
                 and re.search(r"\[Conductor\]|\bCONDUCTOR_IP\b|\bVNET_[A-Z]", p.read_text())]
    assert offenders == []


def test_events_from_the_real_logs() -> None:
    frame = events_frame(sources(), load_profile().events)
    counts = Counter(frame["event"])
    assert counts["ready"] == 3  # conductor and two switches
    assert counts["switch_registered"] == 2
    assert counts["agent_joined"] == 4
    assert counts["agent_authenticated"] == 4
    assert counts["route_learned"] == 4
    assert counts["tun_up"] == 3
    joined = frame[frame["event"] == "agent_joined"]
    assert [f["switch"] for f in joined["fields"]] == ["switch2", "switch1", "switch2", "switch1"]
    assert joined["fields"].iloc[0] == {"agent": "agent1", "address": "10.0.1.1",
                                        "switch": "switch2"}
    assert frame["time"].is_monotonic_increasing
    assert frame["time"].iloc[0] == pd.Timestamp("2026-11-29T18:03:42.795300758Z")


def test_failed_agents_give_their_reason() -> None:
    logs = [Source(f"c-{n}", "agent", n, (LOGS / f"agent-failed-{n}.log").read_text())
            for n in ("no-assignment", "after-assignment")]
    reasons = failure_reasons(logs, {"no-assignment", "after-assignment"})
    assert reasons == Counter({
        "log ends: [Agent] Did not receive switch assignment": 1,
        "log ends: [Agent] Assigned to switch switch1 @ 172.19.0.3:6000": 1})
    frame = events_frame(logs, load_profile().events)
    assert list(frame["event"]) == ["connecting", "gave_up", "connecting", "assigned"]


def test_pool_lines_name_their_process() -> None:
    text = ("2026-11-29T18:03:46.1Z agent7| [Agent] Did not receive switch assignment\n"
            "2026-11-29T18:03:46.2Z agent8| [TUN] Interface vnet-agent8 up with IP 10.0.1.8/24\n")
    source = Source("pool-switch1-1", "agent", "pool-switch1-1", text)
    frame = events_frame([source], load_profile().events)
    assert list(zip(frame["process"], frame["event"], strict=True)) == [
        ("agent7", "gave_up"), ("agent8", "tun_up")]
    assert failure_reasons([source], {"agent7"}) == Counter(
        {"log ends: [Agent] Did not receive switch assignment": 1})
    assert last_lines(source, 1) == ["agent8| [TUN] Interface vnet-agent8 up with IP 10.0.1.8/24"]


def two_sites(agents: int = 4) -> object:
    return parse_topology({"name": "t", "overlay": "vnet", "switches": 2, "agents": agents},
                          "test")


def test_config_for_the_topology_and_for_the_seed_sizes() -> None:
    profile = load_profile()
    topology = parse_topology({"name": "t", "overlay": "vnet", "switches": 2, "agents": 6}, "t")
    text = topology_config(topology, profile, "run1")
    assert "agent1 10.0.1.1" in text and "agent6 10.0.1.6" in text
    # rules between the measured agents: the first two of each switch (4 agents, 6 pairs)
    assert len([line for line in text.splitlines() if line.count(" ") == 1
                and not line.split()[1][0].isdigit() and not line.startswith("#")]) == 6
    for machines, lines, kbytes in ((300, 1504, 23), (5000, 25004, 391)):
        config = machines_config(profile, machines)
        assert len(config.splitlines()) == lines  # the seed's 1504 and 25004 lines
        assert abs(len(config.encode()) / 1000 - kbytes) / kbytes < 0.15


def test_keys_are_random_per_stack_in_files_each_container_its_own(tmp_path: Path) -> None:
    """No key in the compose file or on a command line vnetbench writes: each container
    mounts the key file of its own nodes, the conductor the credentials file; TLS
    material per role; everything private removed after the run."""
    topology = parse_topology({"name": "t", "overlay": "vnet", "switches": 2, "agents": 5,
                               "agent_pool": 2, "settings": {"tls": True}}, "t")
    images = VnetImages(dict.fromkeys(("conductor", "switch", "agent"), "v"), "test")
    vnet = Vnet({}, VnetFacts(images))
    plan = plan_addresses(topology, "r", IPv4Network("10.170.0.0/16"))
    compose = render_compose(topology, vnet, "r", plan, ImageSet())
    vnet.write_files(topology, plan, tmp_path / "one")
    vnet.write_files(topology, plan, tmp_path / "two")
    keys = (tmp_path / "one/vnet/keys/pool-switch1-1").read_text().split()
    assert keys[0::2] == ["agent1", "agent3"] and all(len(k) == 16 for k in keys[1::2])
    assert keys != (tmp_path / "two/vnet/keys/pool-switch1-1").read_text().split()
    assert not any(k in compose for k in keys[1::2])
    auth = (tmp_path / "one/vnet/conductor/auth.txt").read_text()
    assert auth.splitlines()[0].startswith("switch switch1 ") and len(auth.splitlines()) == 7
    assert stat.S_IMODE((tmp_path / "one/vnet/keys/switch1").stat().st_mode) == 0o600
    services = yaml.safe_load(compose)["services"]
    assert "./vnet/keys/switch2:/vnetbench-keys:ro" in services["switch2"]["volumes"]
    assert "./vnet/agent:/vnetbench-files:ro" in services["pool-switch1-1"]["volumes"]
    assert all("keys" not in v and "conductor" not in v
               for v in services["pool-switch1-1"]["volumes"] if "switch1-1" not in v)
    assert sorted(p.name for p in (tmp_path / "one/vnet/agent").iterdir()) == [
        "ca.pem", "cert.pem", "key.pem"]
    removed = remove_private_files(vnet, tmp_path / "one")
    assert len(removed) == 5 + 1 + 3  # key files of 2 switches and 3 pools, auth, TLS keys
    assert not list((tmp_path / "one/vnet/keys").iterdir())
    assert not (tmp_path / "one/vnet/conductor/auth.txt").exists()


def test_pki_one_ca_and_a_certificate_per_role_keys_owner_only(tmp_path: Path) -> None:
    pki = make_pki(tmp_path / "pki", "run1", ["conductor", "switch", "agent"])
    ca = x509.load_pem_x509_certificate(pki.ca.read_bytes())
    for role, issued in pki.roles.items():
        cert = x509.load_pem_x509_certificate(issued.cert.read_bytes())
        assert cert.issuer == ca.subject
        assert role in cert.subject.rfc4514_string()
        cert.verify_directly_issued_by(ca)
        assert stat.S_IMODE(issued.key.stat().st_mode) == 0o600


def test_token_bucket_matches_the_seed() -> None:
    """26786 packets/s offered, 4377 allowed, 1 s of burst: about 107670 dropped in 5 s."""
    limits = AgentLimits(packets_per_second=5000, bits_per_second=50e6, burst_seconds=1.0)
    prediction = token_bucket_drops(packets_sent=133930, seconds=5.0, payload_bytes=1400,
                                    limits=limits)
    assert round(prediction.offered_pps) == 26786
    assert round(prediction.allowed_pps) == 4377
    assert abs(prediction.dropped - 107670) < 10
    assert abs(prediction.dropped - 107655) / 107655 < 0.0005  # the seed measured 107653-8
    generous = AgentLimits(packets_per_second=1e9, bits_per_second=1e12, burst_seconds=1.0)
    assert token_bucket_drops(1000, 5.0, 1400, generous).dropped == 0


def test_udp_report_of_a_real_flood() -> None:
    udp = parse_iperf_udp((DATA / "iperf3-udp-300m.json").read_text())
    assert udp.payload_bytes == 1400
    assert udp.packets_sent == 53576 and udp.packets_lost == 0
    assert abs(udp.packets_sent / udp.seconds - 26786) < 50  # 300 Mbit/s of 1400 bytes


def test_gate_maths_and_stamps(tmp_path: Path) -> None:
    assert release_stamp("x\nvnetbench-gate released 1764439426.123456\n") == 1764439426.123456
    assert release_stamp("vnetbench-gate released 1764439426,5\n") == 1764439426.5
    assert release_stamp("[Agent] Connecting\n") is None
    spread = gate_spread({"a": 100.000, "b": 100.022, "c": 100.010, "d": None})
    assert spread.released == 3 and spread.waiting == 1
    assert spread.spread_ms == pytest.approx(22.0)
    assert gate_spread({}).spread_ms is None
    gate = prepare_gate(tmp_path)
    assert stat.S_ISFIFO((gate / "release").stat().st_mode)
    assert (gate / "vnetbench-entry").stat().st_mode & 0o777 == 0o555


def test_join_result_reports_partial_joins_with_reasons() -> None:
    joined = {f"agent{i}": pd.Timestamp(100.0 + i / 100, unit="s", tz="UTC") for i in range(8)}
    outcome = JoinOutcome(total=10, joined=joined, switches=Counter(switch1=4, switch2=4),
                          released_first=100.0, released_last=100.05, gate_waiting=0,
                          reasons=Counter({"log ends: [Agent] Did not receive switch "
                                           "assignment": 2}), settle_s=0.1)
    result = result_of(outcome, 30)
    assert result.metrics["join_seconds"][0] == pytest.approx(0.07)
    assert result.metrics["joined"][0] == 8 and result.metrics["not_joined"][0] == 2
    assert result.metrics["gate_spread_ms"][0] == pytest.approx(50.0)
    assert result.status.startswith("partial: 8 of 10 joined within 30 s")
    assert "2 x log ends: [Agent] Did not receive switch assignment" in result.status
    assert result.summary["split"] == "switch1:4,switch2:4"


def test_pools_fit_big_rooms() -> None:
    assert pool_size(20, None) == 1 and pool_size(800, None) == 20 and pool_size(800, 1) == 1
    topology = parse_topology({"name": "t", "switches": 2, "agents": 800, "agent_pool": 20}, "t")
    containers = topology.agent_containers()
    assert len(containers) == 40 and all(len(c.agents) == 20 for c in containers)
    assert topology.container_of("agent3") == "pool-switch1-1"


def test_image_list_forms() -> None:
    assert parse_image_list("vnet:dev") == {"conductor": "vnet:dev", "switch": "vnet:dev",
                                            "agent": "vnet:dev"}
    assert parse_image_list("agent=a, switch=s") == {"agent": "a", "switch": "s"}
    with pytest.raises(UserError, match="ROLE=IMAGE"):
        parse_image_list("router=x")


def test_log_lines_in_time_order_despite_trimmed_fractions() -> None:
    """Docker interleaves stdout and stderr and trims trailing zeros of the fraction."""
    from vnetbench.measure.events import in_time_order, lines_of

    text = ("2026-11-29T21:05:32.3Z agent9| second\n"
            "2026-11-29T21:05:32.25Z agent9| first\n"
            "2026-11-29T21:05:32.31Z third\n")
    ordered = in_time_order(lines_of(Source("c", "agent", "agent9", text)))
    assert [(line.process, line.text) for line in ordered] == [
        ("agent9", "first"), ("agent9", "second"), ("agent9", "third")]
    assert failure_reasons([Source("c", "agent", "agent9", text)], {"agent9"}) == Counter(
        {"log ends: third": 1})


def test_every_route_to_vnet_images_and_profile_reaches_the_adapter(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--vnet-image, VNETBENCH_VNET_IMAGES, overlay_options.vnet.images and
    --vnet-profile all reach the one adapter a run makes (issue #11's bug: the
    availability check used to look at the profile's default names only)."""
    base = parse_topology({"name": "t", "overlay": "vnet", "switches": 2, "agents": 2}, "t")
    profile = tmp_path / "mine.yml"
    profile.write_text("ports: {switch: 7000}\n")
    bound = overlay_for(with_vnet_options(base, ["conductor=my/c:1", "agent=my/a"], profile))
    assert isinstance(bound, Vnet)
    assert bound.chosen_images() == {"conductor": "my/c:1", "agent": "my/a"}
    assert bound.profile.ports["switch"] == 7000
    requested, source = requested_images(bound.profile, bound.chosen_images())
    assert requested == {"conductor": "my/c:1", "switch": "vnet-switch", "agent": "my/a"}
    assert source == "the topology/command line"
    in_file = parse_topology({"name": "t", "overlay": "vnet", "switches": 2, "agents": 2,
                              "overlay_options": {"vnet": {"images": {"switch": "s:2"}}}}, "t")
    from_file = overlay_for(in_file)
    assert isinstance(from_file, Vnet)
    assert requested_images(from_file.profile, from_file.chosen_images())[0]["switch"] == "s:2"
    monkeypatch.setenv("VNETBENCH_VNET_IMAGES", "one/image:all")
    from_env = overlay_for(base)
    assert isinstance(from_env, Vnet)
    assert requested_images(from_env.profile, from_env.chosen_images()) == (
        dict.fromkeys(("conductor", "switch", "agent"), "one/image:all"),
        "VNETBENCH_VNET_IMAGES")
    with pytest.raises(UserError, match="not a Docker image name"):
        with_vnet_options(base, ["agent=Not An Image"], None)


SNAPSHOT_IMAGES = VnetImages(dict.fromkeys(("conductor", "switch", "agent"), "v"), "test")


def race_sources(switch_text: str | None = None) -> list[Source]:
    """A join pass recorded on the public snapshot (100 machines, 3 of them refused):
    the conductor's assignments, switch2's log and the agents' pool lines."""
    race = DATA / "vnet-join-race"
    switch = switch_text if switch_text is not None else (race / "switch2.log").read_text()
    return [Source("conductor", "conductor", "conductor", (race / "conductor.log").read_text()),
            Source("switch2", "switch", "switch2", switch),
            Source("pool-switch2-1", "agent", "pool-switch2-1", (race / "agents.log").read_text())]


def lookup(sources: list[Source]) -> Callable[[str, str], pd.DataFrame]:
    frame = events_frame(sources, load_profile().events)
    return lambda role, event: frame[(frame["role"] == role) & (frame["event"] == event)]


def test_an_agent_refused_for_a_token_the_switch_learned_later_is_named_by_the_race() -> None:
    vnet = Vnet({}, VnetFacts(SNAPSHOT_IMAGES))
    missing = {"agent20", "agent4"}  # agent99 joined
    reasons = vnet.why_not_joined(lookup(race_sources()), missing)
    race = ("refused by switch2 (invalid token): its token from the conductor reached the "
            "switch after the agent, which did not try again")
    assert reasons == {"agent20": race, "agent4": race}
    # their own logs end at the assignment: without the switch's side the reason is vaguer
    assert failure_reasons([race_sources()[2]], missing) == Counter(
        {"log ends: [Agent] Assigned to switch switch2 @ 10.160.0.11:6000": 2})


def test_a_refusal_without_the_late_token_is_named_without_the_race() -> None:
    switch = "".join(line + "\n" for line in (DATA / "vnet-join-race" / "switch2.log")
                     .read_text().splitlines() if "Expecting agent agent4 " not in line)
    reasons = Vnet({}, VnetFacts(SNAPSHOT_IMAGES)).why_not_joined(
        lookup(race_sources(switch)), {"agent20", "agent4"})
    assert reasons["agent4"] == "refused by switch2 (invalid token)"
    assert reasons["agent20"].endswith("which did not try again")
    # an agent that joined is never explained, whatever the switch logged
    assert Vnet({}, VnetFacts(SNAPSHOT_IMAGES)).why_not_joined(
        lookup(race_sources()), {"agent99"}) == {}
