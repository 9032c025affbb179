"""Shaped links on this kernel (no netem: tbf, iptables statistic, NFQUEUE delay
line), measured against what was configured."""

from __future__ import annotations

import json
import math
import re
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from python_on_whales import docker

from tests.integration.conftest import leftovers, stands
from vnetbench.analysis.results import load_results, named
from vnetbench.deploy.lifecycle import StackSpec, prepare, running
from vnetbench.engines.allocation import claimed_block
from vnetbench.engines.build import build_project_images
from vnetbench.model.topology import Topology, parse_topology
from vnetbench.overlays.baseline import Baseline
from vnetbench.runs.session import run_scenarios
from vnetbench.runtime import labels
from vnetbench.runtime.images import ImageSet
from vnetbench.runtime.labels import current_owner
from vnetbench.runtime.rundir import new_run_id
from vnetbench.scenarios import get_scenario
from vnetbench.shaping.apply import ShapingKeeper, available_mechanisms, shape_run, shaping_of

pytestmark = pytest.mark.integration
TCP_OVERHEAD = 1448 / 1514  # TCP payload per Ethernet frame (MSS 1448 with timestamps)
# TCP through tbf cannot beat the rate (its burst is 4 ms of it: under 1 % of a
# 5 s stream, so at most +2 %), and gets somewhat less: slow start at the
# beginning, and cubic halving its window at each drop from tbf's 50 ms queue
# leaves the link idle for part of each sawtooth. Seen here: 0.94-1.00 of
# rate x 1448/1514 at 10 Mbit/s over 5 s; the floor is 0.90.
RATE_LOW, RATE_HIGH = 0.90, 1.02
# The delay line holds each packet for its delay less its own measured latency
# (vnetbench-shape calibrates it at start). What remains per direction: the
# calibration's error (the median of 200 loopback trips against a line that
# then runs under other load, a few 100 us here) and the wake-up and
# scheduling lateness of a Python process on a shared 2-core machine: the
# bound is 0.5 ms + 5 % of the delay per direction, so a 10 ms delay each way
# adds 20 ms +- 2 ms to a round trip (one run before calibration measured
# 21.03 ms: the line's own ~0.5 ms each way).
DELAY_TOLERANCE_MS = 0.5
DELAY_TOLERANCE_SHARE = 0.05
# The loss check's sample: the binomial interval's width is set by the probes' number,
# not their pace. Each probe's fate is its own draw (iptables `statistic --mode random`
# per packet, each way), so 2000 probes at 2 ms are the same sample as at the default
# 10 ms, in 4 s instead of 20. 2 ms is ping's floor (iputils refuses less for a user;
# the setting's own minimum). The delay line holds each packet to its own due time (a
# heap, images/tools/vnetbench-shape), so the ~10 probes in flight over the 20 ms round
# trip do not wait behind each other; the line carries the pass's TCP stream, at far
# more packets a second, just before. At no rate that stream is more than a line can
# carry (36,000 packets in its second, 45 % of them over 1 ms late, here): the pass
# would fail on the line, rightly. 100 Mbit/s is 8,300 packets a second, which the
# line kept (2 of 8,239 over 1 ms), and adds 7 us to a ping's frame.
LOSS_PINGS, PING_INTERVAL_MS = 2000, 2
LINE_RATE = "100mbit"


def shaped(name: str, backbone: dict[str, Any], **settings: Any) -> Topology:
    return parse_topology({"name": name, "switches": 2, "agents": 2,
                           "links": {"backbone": backbone},
                           "settings": {"passes": 1, **settings}}, "test", overrides={})


def measure(topology: Topology, tmp_path: Path) -> tuple[dict[str, float], dict[str, Any]]:
    run_dir = run_scenarios(topology, [get_scenario("throughput")], tmp_path)
    frame = named(load_results(run_dir))
    assert frame["status"].map(stands).all(), frame["status"].iloc[0]
    record = json.loads((run_dir / "run.json").read_text())
    assert leftovers(record["run_id"]) == []
    return frame.set_index("metric")["value"].to_dict(), record


@pytest.mark.parametrize("rate_mbit", [10, 100])
def test_tcp_through_a_shaped_rate_within_its_bounds(rate_mbit: int, tmp_path: Path) -> None:
    value, record = measure(shaped(f"it-rate{rate_mbit}", {"rate": f"{rate_mbit}mbit"},
                                   seconds=5, pings=20), tmp_path)
    expected = rate_mbit * TCP_OVERHEAD
    assert RATE_LOW <= value["tcp_mbit"] / expected <= RATE_HIGH, (value["tcp_mbit"], expected)
    applied = record["links"]["applied"]["throughput"]
    tbf = [q for node in applied.values() if isinstance(node, dict) for q in node["qdiscs"]
           if q["kind"] == "tbf"]
    assert {q["options"]["rate"] for q in tbf} == {rate_mbit * 1_000_000 // 8}


def test_delay_adds_twenty_ms_and_loss_matches_its_binomial_interval(tmp_path: Path) -> None:
    """A correct loss falls outside its 95 % interval one time in twenty, so a miss is
    measured once more: two misses in a row (1 in 400 for a correct link) fail."""
    if "netem" not in available_mechanisms():
        assert {"nfqueue", "statistic"} <= set(available_mechanisms())
    # Pings every PING_INTERVAL_MS, the reference as the shaped runs (one interval on both
    # sides of the difference: an idle core wakes for each ping alike)
    unshaped, _ = measure(shaped("it-plain", {}, seconds=1, pings=50,
                                 ping_interval_ms=PING_INTERVAL_MS), tmp_path)
    expected = 1 - (1 - 0.05) ** 2  # 5 % each way: a ping and its answer cross the backbone
    misses = []
    for attempt in (1, 2):
        value, record = measure(shaped(f"it-delay{attempt}", {"delay": "10ms", "loss": "5%",
                                                               "rate": LINE_RATE},
                                       seconds=1, pings=LOSS_PINGS,
                                       ping_interval_ms=PING_INTERVAL_MS), tmp_path)
        added = value["rtt_mean_ms"] - unshaped["rtt_mean_ms"]
        bound = 2 * (DELAY_TOLERANCE_MS + DELAY_TOLERANCE_SHARE * 10)
        assert abs(added - 20) <= bound, (
            f"10 ms each way across the backbone added {added:.2f} ms (20 +- {bound} ms)")
        if "netem" not in available_mechanisms():  # the line's own latency is recorded
            overheads = [node["delay_line_overhead_us"]
                         for node in record["links"]["applied"]["throughput"].values()
                         if isinstance(node, dict) and "delay_line_overhead_us" in node]
            assert overheads and all(0 <= o < 5000 for o in overheads), overheads
        rules = [r for node in record["links"]["applied"]["throughput"].values()
                 if isinstance(node, dict) for r in node["iptables"]]
        probabilities = [float(r.split("--probability ")[1].split()[0]) for r in rules
                         if "--probability" in r]
        assert probabilities and all(abs(p - 0.05) < 1e-6 for p in probabilities)
        assert any("NFQUEUE" in r for r in rules) or "netem" in available_mechanisms()
        n = value["ping_sent"]
        assert n >= LOSS_PINGS
        margin = 1.96 * math.sqrt(expected * (1 - expected) / n)
        lost = 1 - value["ping_received"] / n
        if abs(lost - expected) <= margin:
            return
        misses.append(f"lost {lost:.4f}, expected {expected:.4f} ± {margin:.4f}")
    pytest.fail("loss outside its 95 % interval twice: " + "; ".join(misses))


def test_a_restarted_container_gets_its_shaping_back(tmp_path: Path) -> None:
    topology = shaped("it-restart", {"rate": "20mbit"})
    build_project_images()  # this checkout's shaper, whoever built the tag last
    with claimed_block() as claim, running(stack_spec(topology, tmp_path), claim) as stack:
        with ShapingKeeper(stack, topology) as keeper:  # shaped at start
            router = stack.container("router-switch1")
            docker.container.restart(router)
            deadline = time.time() + 30
            while time.time() < deadline and "switch1" not in keeper.reapplied:
                time.sleep(0.5)
            state = shaping_of(stack, router)
            restarted = keeper.verify("pass 1")
            again = keeper.verify("pass 2")
        assert keeper.reapplied == ["switch1"]
        assert [q["options"]["rate"] for q in state["qdiscs"] if q["kind"] == "tbf"] == [
            20_000_000 // 8]
        # the pass that saw the restart had its links unshaped for a while; the next,
        # on the shaping applied again, as planned. A rate needs no process: the router
        # is shaped from its host (shaping/namespaces.py), so the router is what started
        assert len(restarted) == 1 and f"{router} was started again" in restarted[0]
        assert again == []
    assert leftovers(stack.run_id) == []


def stack_spec(topology: Topology, directory: Path) -> StackSpec:
    """A baseline stack brought up the way every entry point does (lifecycle)."""
    return StackSpec(prepare(topology, Baseline(), images=ImageSet()),
                     new_run_id(topology.name), directory, current_owner())


def test_shaping_again_replaces_what_the_earlier_shaper_added(tmp_path: Path) -> None:
    """The namespace outlives its shaper: a second shaping (`vnetbench shape`, the pytest
    plugin's shape()) must not leave the first one's rules beside its own (a second
    statistic rule doubled the loss; a stale NFQUEUE rule without its line drops all)."""
    first = shaped("it-reshape", {"loss": "5%", "delay": "5ms"})
    second = first.model_copy(update={"links": first.links.model_copy(update={
        "backbone": first.links.backbone.model_copy(update={"loss": 1.0, "delay": 0.0})})})
    build_project_images()  # this checkout's shaper, whoever built the tag last
    with claimed_block() as claim, running(stack_spec(first, tmp_path), claim) as stack:
        applied = shape_run(stack, second)  # `first` was applied at start
    rules = [r for node in applied.values() if isinstance(node, dict) for r in node["iptables"]]
    assert len(rules) == 2, rules  # one statistic rule per router, no NFQUEUE rule left
    assert all(abs(float(r.split("--probability ")[1].split()[0]) - 0.01) < 1e-6
               for r in rules), rules
    assert leftovers(stack.run_id) == []


@contextmanager
def during_stream(topology: str, action: Callable[[str], None]) -> Iterator[list[float]]:
    """Run `action(run_id)` once the first pass's iperf3 client of a run of `topology`
    is running (the stream is underway); yields [the moment it acted]."""
    acted: list[float] = []

    def watch() -> None:
        deadline = time.time() + 300
        while time.time() < deadline:
            listed = subprocess.run(
                ["docker", "ps", "--filter", f"label={labels.TOOL}=iperf3", "--format",
                 f'{{{{.Names}}}} {{{{.Label "{labels.RUN}"}}}}'],
                capture_output=True, text=True).stdout.splitlines()
            clients = [run for name, run in (line.split() for line in listed)
                       if run.startswith(f"{topology}-") and "-iperf-server-" not in name]
            if clients:
                time.sleep(1.0)  # a second into the stream
                action(clients[0])
                acted.append(time.time())
                return
            time.sleep(0.1)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    yield acted
    watcher.join(timeout=5)


def run_through(topology: Topology, tmp_path: Path, action: Callable[[str], None]
                ) -> tuple[dict[str, Any], dict[str, float], dict[str, Any]]:
    """One throughput pass with `action` done to the run mid-stream: its result row
    (the first metric's), its metrics and run.json."""
    with during_stream(topology.name, action) as acted:
        run_dir = run_scenarios(topology, [get_scenario("throughput")], tmp_path)
    assert acted, "the stream never started, so nothing was done during it"
    record = json.loads((run_dir / "run.json").read_text())
    assert leftovers(record["run_id"]) == []
    frame = named(load_results(run_dir))
    return frame.iloc[0].to_dict(), frame.set_index("metric")["value"].to_dict(), record


def test_a_shaper_killed_mid_pass_fails_the_pass_and_names_it(tmp_path: Path) -> None:
    """The user's case: backbone delay 50 ms, a delay line killed during the stream. Its
    NFQUEUE rule stays and drops (no --queue-bypass), so nothing crosses undelayed, and
    the pass fails naming the shaper, its exit code (137: SIGKILL) and when."""
    # killed a second into a 5 s stream: the pings after it must all cross a dead line
    # (docker kill takes well under the 4 s left)
    if "netem" in available_mechanisms():
        pytest.skip("this kernel has netem: a delay is a qdisc, no shaper process to kill")
    topology = shaped("it-shkill", {"delay": "50ms"}, seconds=5, pings=20)

    def kill(run_id: str) -> None:
        docker.container.kill(f"{run_id}-router-switch1-shaper")

    row, value, record = run_through(topology, tmp_path, kill)
    assert row["state"] == "failed", row["status"]
    assert re.search(r"shaping not as planned: \S+-router-switch1-shaper exited \(137\) at "
                     r"\d\d:\d\d:\d\d UTC", row["status"]), row["status"]
    checks = record["links"]["checks"]["throughput"]
    assert [c["as_planned"] for c in checks] == [False]
    assert any("router-switch1-shaper exited (137)" in c for c in checks[0]["changed"])
    # the pings ran after the kill: their answers cross switch1's line, whose rule
    # outlived it, so none came back (with --queue-bypass all did, 50 ms early)
    assert value.get("ping_received", 0) == 0, value


def test_a_delay_line_past_its_capacity_fails_the_pass_naming_it(tmp_path: Path) -> None:
    """A 1 ms backbone at no rate: TCP between two veths runs at several Gbit/s, a delay
    line (one Python process, every packet through it) carries tens of thousands of
    packets a second (66,000 recorded: tests/data/shaping/line-behind.txt), so within a
    1 s stream the line's queue grows and what crosses it is held past its due time.
    The pass fails naming the line: its delay and rate were the line's. Where the
    kernel has netem there is no line (the delay is the kernel's): nothing to check."""
    if "netem" in available_mechanisms():
        pytest.skip("this kernel has netem: no delay line in userspace")
    value, record = measure_failed(shaped("it-behind", {"delay": "1ms"}, seconds=1, pings=10),
                                   tmp_path)
    assert re.search(r"shaping not as planned: \S+-router-switch\d eth\d: the delay line on "
                     r"queue 0 \(1 ms, jitter 0 ms\) ran behind: [\d,]+ of its [\d,]+ packets",
                     value), value
    (check,) = record["links"]["checks"]["throughput"]
    assert check["as_planned"] is False and any("ran behind" in c for c in check["changed"])


def measure_failed(topology: Topology, tmp_path: Path) -> tuple[str, dict[str, Any]]:
    """One throughput pass that must fail: its status and run.json."""
    run_dir = run_scenarios(topology, [get_scenario("throughput")], tmp_path)
    frame = named(load_results(run_dir))
    assert set(frame["state"]) == {"failed"}, frame["status"].iloc[0]
    record = json.loads((run_dir / "run.json").read_text())
    assert leftovers(record["run_id"]) == []
    return str(frame["status"].iloc[0]), record


def test_a_qdisc_deleted_behind_vnetbench_fails_the_pass_with_what_changed(
        tmp_path: Path) -> None:
    topology = shaped("it-shdel", {"rate": "20mbit"}, seconds=3, pings=20)

    def delete(run_id: str) -> None:
        # from outside vnetbench's code: a shell in the router's namespace, entered through
        # the host's shaper (a rate is shaped from the host: no shaper of its own)
        pid = docker.container.inspect(f"{run_id}-router-switch2").state.pid
        docker.execute(f"{run_id}-host1-shaper", [
            "nsenter", f"--net=/proc/{pid}/ns/net", "sh", "-c",
            "for d in $(ip -o link | cut -d: -f2 | cut -d@ -f1); do "
            "tc qdisc del dev $d root 2>/dev/null; done; true"])

    row, _, record = run_through(topology, tmp_path, delete)
    assert row["state"] == "failed", row["status"]
    assert re.search(r"router-switch2 eth\d+: tbf 1: rate 20000000bit burst 16384 latency "
                     r"50ms is gone \(there now: noqueue 0:\)", row["status"]), row["status"]
    checks = record["links"]["checks"]["throughput"]
    assert checks[0]["as_planned"] is False
    # what still held is recorded too: switch1's tbf
    assert any("router-switch1 eth" in h and "tbf 1:" in h for h in checks[0]["held"])


def test_netem_path_where_the_kernel_has_it(tmp_path: Path) -> None:
    """Runs where sch_netem exists; skipped here with the kernel's own answer."""
    from vnetbench.engines import local
    from vnetbench.shaping.capabilities import detect_capabilities

    netem = next(c for c in detect_capabilities(local()) if c.name == "netem")
    if not netem.available:
        pytest.skip(f"this kernel has no netem: {netem.answer}")
    unshaped, _ = measure(shaped("it-netem0", {}, seconds=1, pings=50), tmp_path)
    value, record = measure(shaped("it-netem", {"delay": "10ms", "rate": "100mbit"},
                                   seconds=3, pings=100), tmp_path)
    assert 19 <= value["rtt_mean_ms"] - unshaped["rtt_mean_ms"] <= 21
    kinds = {q["kind"] for node in record["links"]["applied"]["throughput"].values()
             if isinstance(node, dict) for q in node["qdiscs"]}
    assert {"netem", "tbf"} <= kinds
