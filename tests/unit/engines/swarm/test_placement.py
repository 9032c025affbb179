"""The swarm engine's pure parts: placement, each node's compose share, start waves,
log times on this machine's clock, and the gatekeeper's line protocol (run here
with the host's sh)."""

import os
import subprocess
import threading
import time
from ipaddress import IPv4Network
from pathlib import Path

import pandas as pd
import pytest
import yaml

from vnetbench.deploy.render import render_compose
from vnetbench.engines.compose import ComposeEngine
from vnetbench.engines.swarm.deployment import corrected_times, dynamic_range
from vnetbench.engines.swarm.engine import SEGMENT_MTU, segment_mtus
from vnetbench.engines.swarm.gatekeepers import PROTOCOL, RELEASE_AT, ClockOffset
from vnetbench.engines.swarm.placement import node_share, placed_services, site_nodes, waves
from vnetbench.errors import UserError
from vnetbench.model.addressing import plan_addresses
from vnetbench.model.topology import Topology, parse_topology
from vnetbench.overlays import overlay_for
from vnetbench.report.tables import comparison_table
from vnetbench.runtime.images import ImageSet

NODES = ["node-a", "node-b"]


def topology(**extra: object) -> Topology:
    return parse_topology({"name": "t", "switches": 3, "agents": 6, "engine": "swarm",
                           **extra}, "t.yml")


def rendered(top: Topology) -> dict:
    plan = plan_addresses(top, "r1", IPv4Network("10.170.0.0/16"))
    return yaml.safe_load(render_compose(top, overlay_for(top), "r1", plan, ImageSet()))


def test_sites_spread_over_the_nodes_unless_the_topology_places_them() -> None:
    assert site_nodes(topology(), NODES) == {
        "switch1": "node-a", "switch2": "node-b", "switch3": "node-a"}
    placed = topology(hosts={"switch1": "node-b", "switch3": "node-b"})
    assert site_nodes(placed, NODES) == {
        "switch1": "node-b", "switch2": "node-b", "switch3": "node-b"}


def test_a_node_the_swarm_lacks_is_named() -> None:
    with pytest.raises(UserError, match=r"node-z.*its nodes: node-a, node-b"):
        site_nodes(topology(hosts={"switch2": "node-z"}), NODES)


def test_hosts_must_name_sites_of_the_topology() -> None:
    with pytest.raises(UserError, match="hosts places switch9"):
        topology(hosts={"switch9": "node-a"})


def test_each_site_stays_on_its_node_and_the_fabric_runs_on_every_node() -> None:
    top = topology(overlay="wireguard", start_gate=True)
    compose = rendered(top)
    sites = site_nodes(top, NODES)
    placed = placed_services(compose, top, sites, NODES)
    assert placed["node-a"].count("fabric") == placed["node-b"].count("fabric") == 1
    others = [s for s in compose["services"] if s != "fabric"]
    assert sorted(placed["node-a"] + placed["node-b"]) == sorted(["fabric", "fabric", *others])
    for agent in top.agents:  # an agent runs beside its switch's hub
        node = sites[agent.switch]
        assert any(agent.name in service for service in placed[node])


def test_a_nodes_share_uses_the_swarms_overlays_and_its_copy_of_the_run() -> None:
    top = topology(overlay="wireguard", start_gate=True)
    compose = rendered(top)
    services = placed_services(compose, top, site_nodes(top, NODES), NODES)["node-b"]
    share = node_share(compose, services, "node-b", "r1", "/results/r1/join",
                       "/var/lib/vnetbench/runs/r1/join")
    assert "fabric-node-b" in share["services"]
    assert share["services"]["fabric-node-b"]["container_name"] == "r1-fabric-node-b"
    for key, network in share["networks"].items():
        assert network == {"external": True, "name": f"r1_{key}"}
    for name, service in share["services"].items():
        for dependency in service.get("depends_on", {}):
            assert dependency in services, f"{name} waits for {dependency} of another node"
        for volume in service.get("volumes", []):
            source = str(volume).split(":")[0]
            assert not source.startswith("./"), volume
            if "gate" in source:
                assert source.startswith("/var/lib/vnetbench/runs/r1/join/"), volume


def test_start_waves_put_every_service_after_what_it_depends_on() -> None:
    compose = rendered(topology(overlay="wireguard"))
    order = {name: index for index, wave in enumerate(waves(compose)) for name in wave}
    assert sorted(order) == sorted(compose["services"])
    for name, service in compose["services"].items():
        for dependency in service.get("depends_on", {}):
            assert order[dependency] < order[name]
    assert len(waves(compose)) >= 2  # agents wait for their hubs


def test_the_swarms_dynamic_range_holds_no_planned_address() -> None:
    top = parse_topology({"name": "t", "switches": 2, "agents": 2000}, "t.yml")
    plan = plan_addresses(top, "r1", IPv4Network("10.170.0.0/16"))
    planned = {*plan.container_site.values(), *plan.switch_site.values(),
               *plan.switch_backbone.values(), plan.conductor}
    for network in plan.networks:
        free = dynamic_range(network.subnet)
        assert free.subnet_of(network.subnet)  # type: ignore[arg-type]
        assert not [address for address in planned if address in free]


def test_on_a_swarm_segments_have_the_overlay_networks_mtu_and_tunnels_fit() -> None:
    swarm = segment_mtus(topology(overlay="wireguard"))
    assert swarm.links.site.mtu == swarm.links.backbone.mtu == SEGMENT_MTU
    declared = segment_mtus(topology(links={"site": {"mtu": 1500}}))
    assert declared.links.site.mtu == 1500 and declared.links.backbone.mtu == SEGMENT_MTU
    local = parse_topology({"name": "t", "switches": 2, "agents": 2}, "t.yml")
    assert ComposeEngine().adjust(local) == local  # this machine's engine changes nothing
    wireguard = overlay_for(swarm)
    assert wireguard.tunnel_mtu(swarm) == SEGMENT_MTU - 80  # its UDP must fit the overlay
    assert wireguard.tunnel_mtu(local) == 1420


def test_node_times_move_onto_this_machines_clock() -> None:
    text = ("2026-11-30T10:00:00.500000000Z vnetbench-gate released 1780000000.250000\n"
            "2026-11-30T10:00:01Z Received handshake response\n")
    moved = corrected_times(text, 0.25)
    assert moved.splitlines() == [
        "2026-11-30T10:00:00.250000Z vnetbench-gate released 1780000000.000000",
        "2026-11-30T10:00:00.750000Z Received handshake response"]


def test_an_offset_within_its_uncertainty_is_not_corrected() -> None:
    assert ClockOffset(0.0003, 0.0004).correction_s == 0
    assert ClockOffset(-0.020, 0.0004).correction_s == -0.020


def test_the_comparison_says_where_each_role_ran() -> None:
    rows = [{"scenario": "throughput", "overlay": "baseline", "variant": "", "metric": "tcp_mbit",
             "unit": "Mbit/s", "value": v, "state": "ok", "status": "ok", "remark": "",
             "pass": p, "set_hosts": "node-a: switch1+1 agent; node-b: switch2+1 agent"}
            for p, v in ((1, 9000.0), (2, 9100.0))]
    table = comparison_table(pd.DataFrame(rows))
    assert next(iter(table["ran on"])) == "node-a: switch1+1 agent; node-b: switch2+1 agent"
    assert "ran on" not in comparison_table(pd.DataFrame(rows).drop(columns="set_hosts"))


def blocked_opening_a_fifo(thread_id: int) -> bool:
    """The thread waits in open() for a fifo's writer (Linux: its wait channel); where
    /proc does not say, after a fixed 0.2 s as before."""
    try:
        wchan = Path(f"/proc/self/task/{thread_id}/wchan").read_text().strip()
    except OSError:
        wchan = ""
    if wchan in ("", "0"):
        time.sleep(0.2)
        return True
    return wchan == "wait_for_partner"


def test_the_gatekeeper_protocol_marks_starts_and_opens_the_gate(tmp_path: Path) -> None:
    gate_dir = tmp_path / "gate"
    keeper = subprocess.Popen(["sh", "-c", PROTOCOL, "keeper", str(gate_dir)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                              bufsize=1, env={**os.environ, "RELEASE_AT": RELEASE_AT})
    assert keeper.stdin and keeper.stdout
    assert keeper.stdout.readline().strip() == "ready"

    def ask(line: str) -> str:
        keeper.stdin.write(line + "\n")  # type: ignore[union-attr]
        keeper.stdin.flush()  # type: ignore[union-attr]
        return keeper.stdout.readline().strip()  # type: ignore[union-attr]

    assert float(ask("clock")) > 1.7e9
    assert ask("start 3") == "ok" and (gate_dir / "start").read_text() == "3\n"
    (gate_dir / "marks" / "agent1.waiting.3").touch()
    assert ask("marks") == "agent1.waiting.3"
    os.mkfifo(gate_dir / "release")
    opened: list[float] = []
    waiter_id: list[int] = []

    def wait_at_gate() -> None:
        waiter_id.append(threading.get_native_id())
        with (gate_dir / "release").open() as pipe:  # blocks until the keeper opens it
            opened.append(time.time())
            pipe.read()

    waiter = threading.Thread(target=wait_at_gate)
    waiter.start()
    # at the gate before the instant is chosen: the keeper's open releases it whatever
    # its 0.1 s hold (a loaded host could run the thread's open() after the hold ended,
    # and it waited for a writer that never came again)
    deadline = time.monotonic() + 60
    while not (waiter_id and blocked_opening_a_fifo(waiter_id[0])):
        assert time.monotonic() < deadline, "the waiter never reached the gate"
        time.sleep(0.01)
    at = round(time.time() + 0.3, 3)  # on the millisecond: the line holds it exactly
    answer = ask(f"release_at {at:.6f} 0.1").split()
    # the mechanism's bound is "not before the instant told"; how late the keeper wakes
    # is the machine's load (a busy 2-core host took over 0.2 s), so only the open is
    # bounded, by the waiter's own timeout
    assert answer[0] == "released" and at <= float(answer[1])
    waiter.join(timeout=60)  # a hang guard: the keeper closes its end 0.1 s on
    assert not waiter.is_alive()
    assert at <= opened[0]  # not before the instant told
    keeper.stdin.close()
    assert keeper.wait(timeout=60) == 0  # a hang guard: it ends at its input's end


def test_files_a_ca_writes_are_known_so_other_nodes_get_them() -> None:
    """Nebula's CA runs on one node and writes every hub's and agent's certificates
    into the run directory there: the swarm copies those mounts to the other nodes."""
    from vnetbench.engines.swarm.deployment import FILE_MAKER_ROLES, writable_mounts

    top = topology(overlay="nebula")
    compose = rendered(top)
    makers = [name for name, service in compose["services"].items()
              if service["labels"]["vnetbench.role"] in FILE_MAKER_ROLES]
    assert makers, "Nebula's CA is a service of the stack"
    for name in makers:
        assert writable_mounts(compose["services"][name]) == ["nebula"]
    readers = [s for s in compose["services"].values() if s["labels"]["vnetbench.role"]
               in ("switch", "agent")]
    assert all(not writable_mounts(s) for s in readers)  # they mount theirs read-only



TEST_ENDPOINT = "unix:///run/vnetbench-swarm/node-a/docker.sock"


@pytest.fixture
def test_swarm_up(monkeypatch: pytest.MonkeyPatch) -> None:
    from vnetbench.engines.swarm import cluster

    monkeypatch.setattr(cluster, "test_swarm_manager", lambda: TEST_ENDPOINT)
    monkeypatch.delenv("VNETBENCH_SWARM", raising=False)


def test_the_test_swarm_is_used_only_when_named(test_swarm_up: None,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A run with engine: swarm and no manager took the test swarm (Docker-in-Docker on
    this machine) before the host's own swarm: now the host's, or a refusal."""
    from vnetbench.engines.swarm import cluster

    plain = topology()
    with pytest.raises(UserError, match="no manager is named and this machine's engine"):
        monkeypatch.setattr(cluster, "own_swarm_manager", lambda: None)
        cluster.manager_endpoint(plain)
    monkeypatch.setattr(cluster, "own_swarm_manager", lambda: "unix:///var/run/docker.sock")
    assert cluster.manager_endpoint(plain) == "unix:///var/run/docker.sock"
    assert cluster.manager_endpoint(topology(manager="test")) == (
        TEST_ENDPOINT)
    monkeypatch.setenv("VNETBENCH_SWARM", "test")
    assert cluster.manager_endpoint(plain) == TEST_ENDPOINT


def test_the_test_swarm_named_but_not_up_is_one_paragraph(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from vnetbench.engines.swarm import cluster

    monkeypatch.setattr(cluster, "test_swarm_manager", lambda: None)
    with pytest.raises(UserError, match=r"names the test swarm, which is not up on this "
                                        r"machine.*'vnetbench swarm up'"):
        cluster.manager_endpoint(topology(engine={"name": "swarm", "manager": "test"}))


def test_a_swarm_says_when_it_is_the_test_swarm() -> None:
    from vnetbench.engines.swarm.cluster import Swarm

    assert Swarm(TEST_ENDPOINT, ()).is_test
    assert not Swarm("ssh://me@manager", ()).is_test
    assert not Swarm("unix:///var/run/docker.sock", ()).is_test


def test_a_node_named_as_a_swarm_node_s_helper_is_refused() -> None:
    """fabric-NODE on a node the hosts did not name (the topology check sees only those)."""
    from vnetbench.engines.swarm.engine import check_node_helpers

    named = parse_topology({"name": "t", "switches": 2, "engine": "swarm", "agents": [
        {"name": "fabric-node-b", "switch": "switch1"}, {"name": "b", "switch": "switch2"}]},
        "t")
    with pytest.raises(UserError, match="fabric-node-b is also the name of a swarm node's"):
        check_node_helpers(named, ["node-a", "node-b"])
    check_node_helpers(named, ["node-a", "node-c"])
