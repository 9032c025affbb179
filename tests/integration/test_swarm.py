"""A real two-node Docker Swarm on this machine (Docker-in-Docker nodes of the
project's Debian 13 base with Debian's engine): the two-hosts command of the
README end to end, VXLAN across the nodes beside the single-host bridge in one
run, and teardown that leaves nothing on any node. The nodes are removed at the
end.

Bounds, from what the mechanisms deliver here (both nodes share this machine's
2 cores and kernel): the plain routed path across nodes is kernel VXLAN, measured
at 9.2-10 Gbit/s, so 1 Gbit/s is far below anything working; wireguard-go
through two hubs measured about 700 Mbit/s, so 50 Mbit/s only fails when the
tunnel does not carry full-size packets (an MTU that does not fit the overlay
network gave 0); a join of 100 WireGuard agents joined all 100 in 1.7-4 s,
within the 32 s bounded wait.
"""

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from python_on_whales import DockerClient

from tests.integration.conftest import room_records
from vnetbench.analysis.results import load_results, named
from vnetbench.engines.swarm.deployment import NODE_RUNS
from vnetbench.engines.swarm.testbed import endpoint, node_names, swarm_down, swarm_up
from vnetbench.model.topology import parse_topology
from vnetbench.model.workload import profile_path
from vnetbench.runs.session import run_scenarios
from vnetbench.runtime.labels import run_filter
from vnetbench.scenarios import get_scenario

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def nodes() -> Iterator[list[str]]:
    swarm_up(2)
    yield node_names(2)
    assert swarm_down() == 2


def leftovers_on_nodes(run_id: str, nodes: list[str]) -> list[str]:
    found = []
    for node in nodes:
        client = DockerClient(host=endpoint(node))
        label = run_filter(run_id)
        found += [f"{node}: {c.name}" for c in client.container.list(all=True, filters=label)]
        found += [f"{node}: {n.name}" for n in client.network.list(filters=label)]
        found += [f"{node}: {v.name}" for v in client.volume.list(filters=label)]
        copies = client.run("vnetbench/tools:trixie", ["ls", NODE_RUNS], remove=True,
                            volumes=[(NODE_RUNS, NODE_RUNS)], pull="never")
        found += [f"{node}: {NODE_RUNS}/{name}" for name in str(copies).split()]
    return found


JOINED = 20


def test_the_two_hosts_command_runs_throughput_and_join_across_nodes(
        nodes: list[str], tmp_path: Path) -> None:
    # the README's command and topology, 1 pass of 1 s streams: the rates are only
    # ordered, by a ratio of 13 or more, and a stream stalls only under 0.1 Mbit/s
    # (scenarios/pair.py); a join of 20 machines (BENCH_MACHINES) where the topology
    # says 100: 10 a node split as 50 are, and the gates' skew is one instant's either
    # way (the 100 added 25 s here and no assertion)
    done = subprocess.run(
        [sys.executable, "-m", "vnetbench", "run", "throughput", "join", "--engine", "swarm",
         "-t", str(ROOT / "topologies" / "two-hosts.yml"), "--passes", "1", "--seconds", "1",
         "--out", str(tmp_path)], capture_output=True, text=True, timeout=900,
        env={**os.environ, "COLUMNS": "200", "BENCH_MACHINES": str(JOINED)})
    assert done.returncode == 0, done.stderr[-2000:]
    assert "ran on" in done.stdout
    half = JOINED // 2
    assert f"test swarm, one machine: node-a: switch1+{half} agents;" in done.stdout
    assert f"node-a: switch1+{half} agents; node-b: switch2+{half} agents" in done.stdout
    assert "node-a: switch1+1 agent; node-b: switch2+1 agent" in done.stdout

    compare = next(tmp_path.glob("two-hosts-*-compare"))
    frame = named(load_results(compare))
    assert set(frame["state"]) == {"ok"}, frame["status"].unique()
    value = frame.set_index(["scenario", "overlay", "metric"])["value"]
    # no floors (each rate is this host's CPU), but one order the mechanism gives: the
    # WireGuard stream crosses the same path as the baseline's plus userspace encryption
    # at both ends (9.2 Gbit/s against 0.4-0.7 in CI: a ratio no noise here reaches)
    assert value["throughput", "baseline", "tcp_mbit"] > value["throughput", "wireguard",
                                                               "tcp_mbit"] > 0
    assert value["join", "wireguard", "joined"] == JOINED
    assert value["join", "wireguard", "joined_on_switch1"] == half
    assert value["join", "wireguard", "joined_on_switch2"] == half
    assert value["join", "wireguard", "gate_spread_ms"] >= 0
    # the two nodes' gates open at one instant told in advance; they share 2 cores here,
    # so the second can wait for the first node's woken containers (0.1-66 ms measured),
    # but a release that waited for a message or a clock off by the offset is seconds
    assert 0 <= value["join", "wireguard", "gate_node_skew_ms"] < 500

    for run_dir in (compare / "runs").iterdir():
        record = json.loads((run_dir / "run.json").read_text())
        assert record["status"] == "completed"
        for where in record["hosts"].values():
            assert where["test_swarm"] is True and "Docker-in-Docker" in where["note"]
            assert sorted(where["nodes"]) == nodes
            for facts in where["nodes"].values():
                assert facts["engine"] and facts["kernel"] and facts["cores"] >= 1
                assert facts["clock_uncertainty_ms"] < 5  # one line each way, no process start
            assert where["sites"] == {"switch1": "node-a", "switch2": "node-b"}
        assert leftovers_on_nodes(record["run_id"], nodes) == []


PINGS = 20


def test_vxlan_across_nodes_beside_the_single_host_bridge(nodes: list[str],
                                                          tmp_path: Path) -> None:
    """Both paths in one test, as ratios: the swarm's overlay networks (VXLAN between
    the nodes, MTU 1450) against this engine's bridges (1500). Both stay in one kernel
    here, so neither is 4 times the other; a broken path (0) or a bridge mistaken for
    the overlay fails it, and so does a site that was not placed as asked."""
    measured = {}
    # 1 s streams: the ratio's bounds are a factor of 4 either way, which neither path's
    # first second of slow start comes near; 20 pings: every one answered is the check
    for engine in ("compose", "swarm"):
        topology = parse_topology(
            {"name": f"it-{engine}", "switches": 2, "agents": 2,
             "settings": {"seconds": 1, "passes": 1, "pings": PINGS, "ping_interval_ms": 10},
             "engine": {"name": engine, **({"hosts": {"switch1": "node-b", "switch2": "node-a"},
                                            "manager": "test"} if engine == "swarm" else {})}},
            "test", overrides={})
        run_dir = run_scenarios(topology, [get_scenario("throughput")], tmp_path / engine)
        frame = named(load_results(run_dir))
        assert set(frame["state"]) == {"ok"}, frame["status"].unique()
        value = frame.set_index("metric")["value"]
        assert value["ping_received"] == PINGS
        measured[engine] = value["tcp_mbit"]
        record = json.loads((run_dir / "run.json").read_text())
        if engine == "swarm":
            assert record["hosts"]["throughput"]["sites"] == {"switch1": "node-b",
                                                              "switch2": "node-a"}
            assert "mtu=1450" in str(frame["set_site"].iloc[0])
            assert leftovers_on_nodes(record["run_id"], nodes) == []
        else:
            assert "hosts" not in record
    ratio = measured["swarm"] / measured["compose"]
    assert 0.25 < ratio < 4, measured


def test_shaped_links_and_a_ca_made_on_one_node_work_across_nodes(nodes: list[str],
                                                                 tmp_path: Path) -> None:
    """Nebula's CA runs on one node and writes every node's certificates there (the swarm
    shares them with the other node's copy), and the backbone is shaped to 200 Mbit/s by
    helpers started on the node of each shaped container. tbf delivers the rate less
    framing (180-191 Mbit/s measured through it): above 105 % the shaper was not
    applied. No floor but the pass's own stall floor: Nebula's rate beside other work is
    this host's CPU, and can fall below the shaped rate."""
    topology = parse_topology(
        {"name": "it-shaped", "overlay": "nebula", "engine": {"name": "swarm", "manager": "test"},
         "switches": 2,
         "agents": 2, "links": {"backbone": {"rate": "200mbit"}},
         # a 1 s stream: tbf's bucket (4 ms of the rate) adds 0.4 % to it, far under the
         # 105 % bound, and the stall floor is a tenth of the rate; 10 machines join
         "settings": {"seconds": 1, "passes": 1, "pings": 50, "ping_interval_ms": 10,
                      "machines": 10}}, "test", overrides={})
    run_dir = run_scenarios(topology, [get_scenario("throughput"), get_scenario("join")],
                            tmp_path)
    frame = named(load_results(run_dir))
    assert set(frame["state"]) == {"ok"}, frame["status"].unique()
    value = frame.set_index(["scenario", "metric"])["value"]
    assert 0 < value["throughput", "tcp_mbit"] < 210
    assert value["join", "joined"] == 10
    record = json.loads((run_dir / "run.json").read_text())
    assert record["links"]["applied"], "the shapers' read-back is recorded"
    assert leftovers_on_nodes(record["run_id"], nodes) == []


def test_a_switch_killed_on_another_node_is_measured_as_on_one_host(nodes: list[str],
                                                                    tmp_path: Path) -> None:
    """failover on the swarm: the fault goes through the run's engine to the node that
    hosts the switch (switch2 on node-b), and its outage is measured as on one host:
    at least the 2 s it was down, bounded by the pass's window; nothing left on a node.
    The backbone is shaped: switch2's router, started again on node-b, is shaped again
    there (the keeper watches every node's engine), so the pass's shaping check finds
    every shaper as planned. 500 Mbit/s: far above what the failover's probes send."""
    topology = parse_topology(
        {"name": "it-swarm-fault", "switches": 2, "agents": 4,
         "engine": {"name": "swarm", "manager": "test",
                    "hosts": {"switch1": "node-a", "switch2": "node-b"}},
         "links": {"backbone": {"rate": "500mbit"}},
         "faults": [{"at": "1s", "kill": "switch2", "restart_after": "2s"}],
         "settings": {"passes": 1, "failover_window_s": 10}}, "test", overrides={})
    run_dir = run_scenarios(topology, [get_scenario("failover")], tmp_path)
    frame = named(load_results(run_dir))
    rows = frame[frame["interval_s"].isna()]
    value = dict(zip(rows["metric"], rows["value"], strict=True))
    assert "exited" not in str(rows["status"].iloc[0]), rows["status"].iloc[0]
    assert "not as planned" not in str(rows["status"].iloc[0]), rows["status"].iloc[0]
    assert 2000 <= value["outage_ms_switch-restart"] <= 2000 + 10_000, value
    record = json.loads((run_dir / "run.json").read_text())
    checks = record["links"]["checks"]["failover"]
    assert [c["as_planned"] for c in checks] == [True], checks
    assert any("router-switch2" in held for held in checks[0]["held"]), checks
    assert leftovers_on_nodes(record["run_id"], nodes) == []


def compressed_contest(factor: float) -> dict[str, Any]:
    """The shipped contest profile `factor` times faster: each phase and instant
    `factor` times sooner and each rate `factor` times higher, so each phase asks the
    same number of requests, of the same sizes, as the profile's own (its timeout, a
    contestant's patience, as it is)."""
    profile = yaml.safe_load(profile_path("contest").read_text())
    for phase in profile["phases"]:
        phase["seconds"] /= factor
        for event in phase.get("at_once", []):
            event["at_s"] /= factor
        for kind in phase.get("mix", []):
            kind["rate"] *= factor
    return profile


ROOM_MACHINES, ROOM_RATE, ROOM_SECONDS = 10, 10, 2


@pytest.mark.parametrize("workload", [None, "contest"])
def test_a_room_and_the_contest_across_nodes(nodes: list[str], tmp_path: Path,
                                             workload: str | None) -> None:
    """room across the nodes: the machines on switch1's node (node-a), the server on
    switch2's (node-b), every request over VXLAN between the nodes. The open loop sends what it
    planned whatever the path does (a generator never waits for the replies), and on
    an idle path between two containers every request is answered within the 2 s
    timeout. The contest is the shipped profile 30 times faster (16 s, the same
    requests in each phase), every phase and the statement burst reported."""
    topology = parse_topology(
        {"name": "it-swarm-room", "switches": 2, "agents": 2,
         "engine": {"name": "swarm", "manager": "test",
                    "hosts": {"switch1": "node-a", "switch2": "node-b"}},
         **({"workload": compressed_contest(30)} if workload else {}),
         "settings": {"passes": 1, "seconds": ROOM_SECONDS, "machines": ROOM_MACHINES,
                      "room_rate": ROOM_RATE}}, "test", overrides={})
    run_dir = run_scenarios(topology, [get_scenario("room")], tmp_path)
    frame = named(load_results(run_dir))
    assert set(frame["state"]) == {"ok"}, frame["status"].unique()
    value = frame.set_index("metric")["value"]
    assert value["room_machines"] == ROOM_MACHINES and value["room_no_record"] == 0
    assert value["room_sent"] == value["room_planned"] == value["room_answered"] > 0
    assert value["room_failed"] == 0
    if workload:
        phases = [phase["name"] for phase in compressed_contest(30)["phases"]]
        planned = [value[f"room_phase_planned_{phase}"] for phase in phases]
        answered = [value[f"room_phase_answered_{phase}"] for phase in phases]
        assert answered == planned and all(count > 0 for count in planned), planned
        # the room's plan is the phases' mixes and one statement a machine at once
        assert sum(planned) + ROOM_MACHINES == value["room_planned"]
        assert value["room_burst_unfinished_statement"] == 0
    else:
        assert value["room_planned"] == ROOM_MACHINES * ROOM_RATE * ROOM_SECONDS
    # the room ended when its last request did: the barrier in the server's namespace
    # on node-b released every machine on node-a (it lets go only once all have come)
    # CPU and memory per role through each node's engine (this machine's cgroup files
    # hold neither node's containers: read from them, every figure was missing). Agents
    # and switches run on both nodes, the server's agent on node-b; a counter is never
    # negative, and a running container holds some memory
    if workload is None:
        assert value["room_cpu_server_percent"] >= 0
        for role in ("agent", "switch"):
            assert value[f"room_cpu_{role}_percent"] >= 0, role
            assert value[f"mem_{role}_idle_mib"] > 0 and value[f"mem_{role}_peak_mib"] > 0
    records = room_records(run_dir)
    assert len(records) == ROOM_MACHINES
    assert all(record["released"] >= max(r["ended"] for r in records) for record in records)
    record = json.loads((run_dir / "run.json").read_text())
    assert record["hosts"]["room"]["sites"] == {"switch1": "node-a", "switch2": "node-b"}
    assert leftovers_on_nodes(record["run_id"], nodes) == []
