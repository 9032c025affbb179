"""The kernel's counters around a room's pass: parsers on recorded output
(tests/data/counters), deltas, and the snapshot's one exec per namespace."""

from __future__ import annotations

from dataclasses import replace
from ipaddress import IPv4Network
from pathlib import Path

import pytest

from vnetbench.engines.base import EngineError, Listed, RunRef, ToolOutput
from vnetbench.scenarios.room.counters import (
    SCRIPT,
    CounterFormatError,
    Snapshot,
    increase,
    parse_loss_drops,
    parse_netstat,
    parse_qdiscs,
    parse_snapshot,
    pass_counters,
    read_snapshots,
    tcp_counters,
    tcp_delta,
)
from vnetbench.shaping.namespaces import NAMESPACE_SECTION, Placed

DATA = Path(__file__).parents[3] / "data" / "counters"
NETWORKS = [(IPv4Network("10.160.0.0/24"), "backbone"),
            (IPv4Network("10.160.16.0/20"), "site switch1")]


def read(name: str) -> str:
    return (DATA / name).read_text()


def test_qdisc_statistics_from_tc_json() -> None:
    lo, eth0 = parse_qdiscs(read("host-qdiscs.json"))
    assert (lo.dev, lo.kind, lo.root, lo.packets) == ("lo", "noqueue", True, 0)
    assert (eth0.dev, eth0.kind, eth0.packets, eth0.drops) == ("eth0", "pfifo_fast", 35473, 0)


def test_tc_output_not_json_is_refused() -> None:
    with pytest.raises(CounterFormatError, match="not JSON"):
        parse_qdiscs("Error: Cannot find device")


def test_proc_net_counters_both_files() -> None:
    tables = parse_netstat(read("host-proc-net.txt"))
    assert tables["Tcp"]["RtoMin"] == 200 and tables["Tcp"]["MaxConn"] == -1
    assert tables["Tcp"]["RetransSegs"] == 5
    assert {"TCPTimeouts", "ListenOverflows", "ListenDrops", "TCPLostRetransmit"} <= set(
        tables["TcpExt"])
    assert set(tcp_counters(tables)) == {"OutSegs", "RetransSegs", "TCPTimeouts",
                                         "TCPLostRetransmit", "ListenOverflows", "ListenDrops",
                                         "TCPSpuriousRTOs", "TCPDSACKRecv", "TCPLossUndo",
                                         "TCPDSACKUndo", "TCPSynRetrans"}


def test_proc_net_values_missing_is_refused() -> None:
    with pytest.raises(CounterFormatError, match="no line of values"):
        parse_netstat("TcpExt: SyncookiesSent ListenOverflows\nIpExt: 0 0\n")


def test_loss_rule_counts_from_iptables_save_c() -> None:
    saved = ("*raw\n:PREROUTING ACCEPT [2800:169200]\n"
             "[70:4230] -A PREROUTING -i eth0 -m statistic --mode random --probability 0.02 "
             "-j DROP\n[5:300] -A PREROUTING -i eth1 -j ACCEPT\nCOMMIT\n")
    assert parse_loss_drops(saved) == {"eth0": 70}  # the chain's policy and ACCEPT: not drops


def test_a_machines_snapshot_in_its_sections() -> None:
    snapshot = parse_snapshot(read("machine-after.txt"))
    assert snapshot.loss_drops == {"eth0": 70}
    assert snapshot.addresses["eth0"] == "10.160.16.10"
    assert snapshot.tcp["RetransSegs"] == 30 and snapshot.tcp["TCPTimeouts"] > 0
    assert [q.kind for q in snapshot.qdiscs] == ["noqueue", "tbf", "noqueue"]


def test_a_snapshot_without_tcp_counters_is_refused() -> None:
    with pytest.raises(CounterFormatError, match="no TCP counters"):
        parse_snapshot("OCI runtime exec failed")


def test_a_pass_deltas_per_link_and_machine() -> None:
    before = {"agent1": parse_snapshot(read("machine-before.txt")),
              "server": parse_snapshot(read("server-before.txt"))}
    after = {"agent1": parse_snapshot(read("machine-after.txt")),
             "server": parse_snapshot(read("server-after.txt"))}
    counters = pass_counters(before, after, {"agent1": "machine", "server": "server"},
                             NETWORKS)
    [link] = counters.links  # lo, wg0 and the server's eth0 are not shaped
    assert (link.node, link.dev, link.link, link.qdisc) == ("agent1", "eth0", "site switch1",
                                                            "tbf")
    assert (link.drops, link.overlimits, link.loss_drops, link.backlog) == (7, 306, 67, 1514)
    assert link.lost == 74
    machine, server = counters.tcp
    assert (machine.retrans_segs, machine.timeouts, machine.lost_retransmit) == (25, 4, 1)
    assert (server.role, server.listen_overflows, server.listen_drops) == ("server", 3, 5)
    assert counters.unread == {}


def test_the_undo_counters_kept_per_node_and_in_the_record() -> None:
    before = parse_snapshot(read("machine-before.txt"))
    counters = pass_counters({"agent1": before, "agent2": before},
                             {"agent1": parse_snapshot(read("machine-after-spurious.txt")),
                              "agent2": parse_snapshot(read("machine-after.txt"))},
                             {"agent1": "machine", "agent2": "machine"}, NETWORKS)
    undone, none = counters.tcp
    assert (undone.timeouts, undone.loss_undo, undone.spurious_rtos, undone.dsack_undo,
            undone.dsack_recv) == (4, 4, 3, 1, 4)
    assert (none.timeouts, none.loss_undo, none.spurious_rtos, none.dsack_undo) == (4, 0, 0, 0)
    [kept, _] = counters.record()["tcp"]
    assert (kept["loss_undo"], kept["spurious_rtos"], kept["dsack_undo"]) == (4, 3, 1)


def test_an_undo_counter_the_kernel_lacks_is_unknown_not_zero() -> None:
    def older(snapshot: Snapshot) -> Snapshot:  # a kernel with no TCPLossUndo
        return replace(snapshot, tcp={k: v for k, v in snapshot.tcp.items()
                                      if k != "TCPLossUndo"})

    delta = tcp_delta("agent1", "machine", older(parse_snapshot(read("machine-before.txt"))),
                      older(parse_snapshot(read("machine-after.txt"))))
    assert delta.loss_undo is None  # not 0: none undone would be a claim
    assert (delta.timeouts, delta.spurious_rtos, delta.dsack_undo) == (4, 0, 0)


def test_a_node_read_at_one_end_only_is_unread() -> None:
    snapshot = parse_snapshot(read("machine-before.txt"))
    counters = pass_counters({"agent1": snapshot}, {"agent2": snapshot}, {}, NETWORKS,
                             {"agent3": "gone"})
    assert counters.tcp == () and set(counters.unread) == {"agent1", "agent2", "agent3"}


def test_a_counter_that_began_again_counts_from_zero() -> None:
    assert increase(10, 25) == 15
    assert increase(10, 4) == 4  # its qdisc replaced, its namespace new: 4 since
    assert increase(None, 7) == 7


class Engine:
    """Answers each container's exec with a recorded output, or refuses."""

    def __init__(self, outputs: dict[str, str]) -> None:
        self.outputs = outputs
        self.calls: list[tuple[str, list[str]]] = []

    def execute(self, container: str, argv: list[str]) -> ToolOutput:
        self.calls.append((container, argv))
        if container not in self.outputs:
            raise EngineError(f"No such container: {container}")
        return ToolOutput(0, self.outputs[container], "")


def test_one_exec_per_namespace_and_those_refused_named() -> None:
    engine = Engine({"p-agent1-shaper": read("machine-after.txt"),
                     "p-server": read("server-after.txt")})
    found, unread = read_snapshots(RunRef(engine, "p"),  # type: ignore[arg-type]
                                   {"agent1": "p-agent1-shaper", "server": "p-server",
                                    "agent2": "p-agent2"})
    assert set(found) == {"agent1", "server"}
    assert list(unread) == ["agent2"] and "No such container" in unread["agent2"]
    assert sorted(c for c, _ in engine.calls) == ["p-agent1-shaper", "p-agent2", "p-server"]
    assert all(argv == ["sh", "-c", SCRIPT] for _, argv in engine.calls)


class HostEngine(Engine):
    """A host shaper that answers READ_LOOP with each PID's recorded output; PID 12's
    namespace cannot be entered (its process is gone)."""

    def containers(self, filters: object) -> list[Listed]:
        return [Listed("id", "p-host1-shaper", "running", None, {}, "")]

    def execute(self, container: str, argv: list[str]) -> ToolOutput:
        self.calls.append((container, argv))
        assert container == "p-host1-shaper" and argv[3] == SCRIPT
        text = "".join(f"{NAMESPACE_SECTION} {pid}\n" + (
            read("machine-after.txt") if pid == "11" else f"{NAMESPACE_SECTION} {pid} failed\n")
            for pid in argv[4:])
        return ToolOutput(0, text, "")


def test_namespaces_with_a_host_shaper_are_read_in_one_call_and_a_gone_one_named() -> None:
    engine = HostEngine({})
    found, unread = read_snapshots(RunRef(engine, "p"),  # type: ignore[arg-type]
                                   {"agent1": "p-agent1", "agent2": "p-agent2"},
                                   {"agent1": Placed("p-agent1", "", 11),
                                    "agent2": Placed("p-agent2", "", 12)})
    assert found["agent1"] == parse_snapshot(read("machine-after.txt"))
    assert unread == {
        "agent2": "p-agent2: its namespace could not be entered (its process is gone)"}
    assert len(engine.calls) == 1
