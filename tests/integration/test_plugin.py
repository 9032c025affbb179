"""The pytest plugin (vnetbench.pytest_plugin) on real containers: used from this
suite, and from a test file outside the project with only the installed wheel."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

import pytest

from tests.installed import install_wheel, run
from tests.integration.conftest import leftovers
from tests.integration.test_shaping import DELAY_TOLERANCE_MS, DELAY_TOLERANCE_SHARE
from vnetbench.deploy.testing import RunningTopology
from vnetbench.pytest_plugin import TopologyFactory

pytestmark = pytest.mark.integration
# 10 ms each way on the backbone adds 20 ms to a round trip, within the delay
# line's bound (see test_shaping): 0.5 ms + 5 % of the delay per direction. The
# minimum RTTs are compared, not the means: the delay line's error is its
# calibration's, while its wake-up lateness under outside load only ever adds, and
# the mean of 50 pings took 2.14 ms of it while five other processes kept both cores
# busy (added 22.14 ms); the fastest of 50 is the one the line held for its delay.
ADDED_BOUND_MS = 2 * (DELAY_TOLERANCE_MS + DELAY_TOLERANCE_SHARE * 10)

OUTSIDE_TEST = dedent(f"""
    import json, os

    def test_two_sites(vnetbench_topology):
        net = vnetbench_topology({{"name": "outside", "switches": 2, "agents": 2}},
                                 overlay="baseline")
        with open(os.environ["RUN_IDS"], "a") as ids:
            ids.write(net.run_id + "\\n")
        before = net.ping("agent1", "agent2", count=50, interval_s=0.02)
        assert before.received == 50
        applied = net.shape("backbone", delay="10ms")
        assert applied, "the delay was not applied"
        after = net.ping("agent1", "agent2", count=50, interval_s=0.02)
        added = after.rtt_min_ms - before.rtt_min_ms
        assert abs(added - 20) <= {ADDED_BOUND_MS}, added
        net.kill("switch2")
        dead = net.ping("agent1", "agent2", count=5, interval_s=0.2)
        assert dead.received == 0
""")


def test_a_test_outside_the_project_uses_the_installed_plugin(tmp_path: Path) -> None:
    """The Done-when of the plugin: the installed package's fixtures bring up two
    sites, ping across, move the RTT with a backbone delay, see a killed router
    break the path, and leave nothing behind."""
    installed = install_wheel(tmp_path, TESTCONTAINERS_RYUK_DISABLED="true",
                              RUN_IDS=str(tmp_path / "run-ids"))
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "test_outside.py").write_text(OUTSIDE_TEST)
    plugins = run([installed.python, "-c", "from importlib.metadata import entry_points; "
                   "print([e.value for e in entry_points(group='pytest11')])"],
                  cwd=outside, env=installed.env)
    assert "vnetbench.pytest_plugin" in plugins
    out = run([installed.python, "-m", "pytest", "-q", "-p", "no:cacheprovider",
               "test_outside.py"], cwd=outside, env=installed.env, timeout=600)
    assert "1 passed" in out, out
    run_ids = (tmp_path / "run-ids").read_text().split()
    assert len(run_ids) == 1
    assert leftovers(run_ids[0]) == []


BROUGHT_UP: list[str] = []  # run ids the module fixture brought up


@pytest.fixture(scope="module")
def shared(vnetbench_module_topology: TopologyFactory) -> RunningTopology:
    net = vnetbench_module_topology("two-sites.yml", overlay="wireguard")
    BROUGHT_UP.append(net.run_id)
    return net


def test_module_topology_runs_commands_measures_and_parses_events(
        shared: RunningTopology) -> None:
    assert [shared.run_id] == BROUGHT_UP
    assert {node.role for node in shared.nodes.values()} >= {"agent", "switch"}
    address = shared.exec("agent1", "ip -4 address show wg0")
    assert address.ok and shared.address("agent1") in address.stdout
    failed = shared.exec("agent1", "echo out; exit 3")
    assert failed.exit_code == 3 and "out" in failed.stdout
    stream = shared.throughput("agent1", "agent2", seconds=1)  # iperf3's least: > 1 Mbit/s
    assert stream.bytes_received > 0 and stream.receiver_mbit > 1
    handshakes = shared.events("handshake")
    assert {"agent1", "agent2"} <= set(handshakes["process"]), handshakes


def test_module_topology_is_shared_by_the_module(shared: RunningTopology) -> None:
    """The same running topology for every test of the module: one bring-up."""
    assert [shared.run_id] == BROUGHT_UP
    assert shared.ping("agent2", "agent1", count=5, interval_s=0.2).received == 5


def test_vnet_topology_fixture(vnet_topology: RunningTopology) -> None:
    """Two sites on vNet (skipped without vNet images): every role is a node, and both
    switches registered with the conductor, as its log says."""
    assert {node.role for node in vnet_topology.nodes.values()} == {
        "conductor", "switch", "agent"}
    registered = vnet_topology.events("switch_registered")
    assert {fields["switch"] for fields in registered["fields"]} == {"switch1", "switch2"}


NET_ADMIN = 1 << 12  # CAP_NET_ADMIN's bit (linux/capability.h)


def test_baseline_routers_and_agents_keep_no_net_admin(vnetbench_topology: TopologyFactory
                                                        ) -> None:
    """NET_ADMIN sets the routes; the process that stays (sleep, exec'd through
    setpriv) has it in none of its sets, and the routed path still carries pings."""
    net = vnetbench_topology({"name": "it-caps", "switches": 2, "agents": 2},
                             overlay="baseline")
    for node in ("switch1", "switch2", "agent1", "agent2"):  # switchN: router-switchN
        status = net.exec(node, "cat /proc/$(pgrep -x sleep)/status")
        assert status.ok, status.stderr
        caps = {key: int(value, 16) for key, _, value in
                (line.partition(":\t") for line in status.stdout.splitlines())
                if key.startswith("Cap")}
        assert caps["CapBnd"] and not caps["CapBnd"] & NET_ADMIN, (node, caps)
        assert not (caps["CapEff"] | caps["CapPrm"] | caps["CapInh"]) & NET_ADMIN, (node, caps)
    assert net.ping("agent1", "agent2", count=10, interval_s=0.05).received == 10
