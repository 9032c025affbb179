"""Where the time went: one test per rule of scenarios/room/attribution.py."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from vnetbench.scenarios.room.attribution import PassFigures, attribute
from vnetbench.scenarios.room.counters import (
    LinkDelta,
    PassCounters,
    Snapshot,
    TcpDelta,
    parse_snapshot,
    tcp_delta,
)

DATA = Path(__file__).parents[3] / "data" / "counters"

FIGURES = PassFigures(p50_ms=2.0, p99_ms=41.7, requests=10_000, failed=0, errors={},
                      failing=(), machines=300, server_cpu_percent=93.0, host_percent=71.0,
                      cores=2)


def link(node: str, lost: int = 0, rule: int = 0, overlimits: int = 0,
         name: str = "site switch2") -> LinkDelta:
    return LinkDelta(node, "eth0", name, "tbf", 5000, lost, overlimits, 0, 0, rule)


def tcp(node: str, retrans: int = 0, timeouts: int = 0, role: str = "machine",
        overflows: int = 0, drops: int = 0) -> TcpDelta:
    return TcpDelta(node, role, 1000, retrans, timeouts, 0, overflows, drops)


QUIET = (tcp("agent1"), tcp("agent2"), tcp("server", role="server"))


def test_a_lossy_link_named_first_with_the_retransmissions_it_caused() -> None:
    counters = PassCounters(
        (link("switch2", lost=34, rule=1200, overlimits=5678), link("agent1", rule=0)),
        (tcp("agent1", retrans=800, timeouts=37), tcp("agent2", retrans=12),
         tcp("server", role="server")))
    said = attribute(counters, FIGURES)
    assert said.tail.startswith("Where the time went (p99 41.7 ms): the shapers of link site "
                                "switch2 dropped 1,234 packets (loss rule 1,200, tbf queue "
                                "full 34; tbf overlimits 5,678) on 2 interfaces (dominant)")
    assert "2 of 2 machines retransmitted 812 segments, 37 by timeout" in said.tail
    assert "the server's accept queue overflowed 0 times; server CPU 0.93 cores" in said.tail
    assert said.causes[0].cost_ms == 200.0  # the machines' timeouts: each at least RTO_MIN
    assert said.failures is None  # nothing failed


def test_drops_fewer_than_the_tail_reach_beyond_the_p99() -> None:
    counters = PassCounters((link("switch2", rule=50),), QUIET)  # 0.5 % of 10,000
    said = attribute(counters, FIGURES)
    assert "(dominant, fewer than 1% of the 10,000 requests: it reaches the p99.9" in said.tail
    assert not said.causes[0].tail_sized
    assert attribute(counters, replace(FIGURES, requests=5000)).causes[0].tail_sized


def test_the_accept_queue_outranks_as_many_link_drops() -> None:
    counters = PassCounters((link("switch2", rule=200),),
                            (tcp("agent1", retrans=200), tcp("server", role="server",
                                                            overflows=150, drops=200)))
    said = attribute(counters, FIGURES)
    assert [c.kind for c in said.causes] == ["accept queue", "link"]  # 1 s a SYN vs an RTT
    assert "the server's accept queue overflowed 150 times (200 connection attempts" in said.tail
    assert said.tail.index("accept queue overflowed 150") < said.tail.index("site switch2")


def test_a_saturated_server_cpu_is_a_cause_below_it_only_a_figure() -> None:
    busy = replace(FIGURES, server_cpu_percent=185.0)  # 1.85 of 2 cores: over 90 %
    said = attribute(PassCounters((), QUIET), busy)
    assert said.causes[0].kind == "cpu"
    assert "the server's CPU was saturated (1.85 cores of 2) (dominant)" in said.tail
    idle = attribute(PassCounters((), QUIET), FIGURES)  # 0.93 of 2 cores
    assert idle.causes == () and "server CPU 0.93 cores" in idle.tail


def test_a_saturated_host_is_a_cause() -> None:
    said = attribute(PassCounters((), QUIET), replace(FIGURES, host_percent=95.0))
    assert "the host's CPU was saturated (95 % of its 2 cores)" in said.tail


def test_retransmissions_with_no_shaper_drop_were_lost_elsewhere() -> None:
    said = attribute(PassCounters((link("switch2"),), (tcp("agent1", retrans=300),)), FIGURES)
    assert said.causes[0].kind == "elsewhere"
    assert "machines retransmitted 300 segments though no shaper dropped a packet" in said.tail


def test_waiting_for_tokens_is_queueing_after_any_loss() -> None:
    counters = PassCounters((link("switch1", overlimits=900, name="site switch1"),
                             link("switch2", rule=500)), QUIET)
    said = attribute(counters, FIGURES)
    assert [c.kind for c in said.causes] == ["link", "queueing"]
    assert ("then packets waited for the rate's tokens at the shapers of link site switch1 "
            "900 times") in said.tail


def test_no_cause_in_the_counters_is_said() -> None:
    said = attribute(PassCounters((link("switch2"),), QUIET), FIGURES)
    assert said.causes == ()
    assert "the counters name no cause" in said.tail
    assert "0 of 2 machines retransmitted 0 segments" in said.tail


def test_the_delay_lines_drops_are_losses() -> None:
    said = attribute(PassCounters((), QUIET, queue_drops=400), FIGURES)
    assert said.causes[0].kind == "link"
    assert "the delay lines' queues dropped 400 packets" in said.tail


def test_failures_attributed_to_the_failing_machines_timeouts() -> None:
    failed = replace(FIGURES, failed=41, errors={"timeout": 40, "connect": 1, "read": 0},
                     failing=("agent1", "agent2", "agent3"))
    counters = PassCounters((link("switch2", rule=800),),
                            (tcp("agent1", retrans=90, timeouts=30), tcp("agent2", retrans=5),
                             tcp("agent3", retrans=40, timeouts=12), tcp("agent4", retrans=3)))
    said = attribute(counters, failed)
    assert said.failures == (
        "Why 3 machines of 300 failed (41 requests failed: timeout 40, connect 1): the "
        "shapers of link site switch2 dropped 800 packets (loss rule 800) on 1 interface; "
        "2 of those machines retransmitted by timeout (42 timeouts).")
    assert said.notes() == [said.tail, said.failures]


def test_failures_with_no_cause_in_the_counters_say_so() -> None:
    failed = replace(FIGURES, failed=2, errors={"status": 2}, failing=("agent1",))
    said = attribute(PassCounters((), QUIET), failed)
    assert said.failures is not None and "the counters name no cause" in said.failures


def test_nodes_unread_are_said() -> None:
    said = attribute(PassCounters((), QUIET, unread={"agent7": "p-agent7: exec failed"}),
                     FIGURES)
    assert "counters of 1 node unread (agent7: p-agent7: exec failed)" in said.tail


def test_netems_drops_are_not_called_a_full_queue() -> None:
    netem = replace(link("switch2", lost=300), qdisc="netem")
    said = attribute(PassCounters((netem,), QUIET), FIGURES)
    assert "dropped 300 packets (netem drops 300)" in said.tail


def test_under_a_schedule_of_faults_the_faults_are_named_not_an_unseen_loss() -> None:
    """A fault's drop rules live in a chain of their own, gone before the second
    snapshot, and a kill drops in no counter: the retransmissions are the faults', not
    "lost outside the shapers" (what this said before the schedule was passed in)."""
    counters = PassCounters((), (tcp("agent1", retrans=300, timeouts=20), tcp("agent2")))
    without = attribute(counters, FIGURES)
    assert without.causes[0].kind == "elsewhere"
    said = attribute(counters, replace(FIGURES, faults=("backbone-down", "switch-restart")))
    assert [c.kind for c in said.causes] == ["fault"]
    assert said.tail.startswith("Where the time went (p99 41.7 ms): the schedule's faults "
                                "(backbone-down, switch-restart): what they dropped or killed "
                                "is in no shaper's counter")
    assert "lost outside the shapers" not in said.tail
    failing = attribute(counters, replace(FIGURES, faults=("backbone-down",), failed=12,
                                          failing=("agent1",)))
    assert failing.failures is not None and "the schedule's faults" in failing.failures


def captured(*afters: str, drop: tuple[str, ...] = ()) -> PassCounters:
    """Machines agent1, agent2... over a pass, each from machine-before.txt to the
    capture named (tests/data/counters), with no drop counted by a shaper; `drop`: the
    TcpExt counters taken out of both ends, as a kernel without them prints them."""
    def snapshot(name: str) -> Snapshot:
        return parse_snapshot(without((DATA / name).read_text(), drop))

    before = snapshot("machine-before.txt")
    return PassCounters((link("switch2"),), tuple(
        tcp_delta(f"agent{n}", "machine", before, snapshot(after))
        for n, after in enumerate(afters, 1)))


def without(text: str, names: tuple[str, ...]) -> str:
    """The capture with these TcpExt columns taken out (names and values alike)."""
    lines = text.splitlines()
    rows = [n for n, line in enumerate(lines) if line.startswith("TcpExt:")]
    keep = [n for n, name in enumerate(lines[rows[0]].split()) if name not in names]
    for row in rows:
        words = lines[row].split()
        lines[row] = " ".join(words[n] for n in keep)
    return "\n".join(lines) + "\n"


SPURIOUS = "machine-after-spurious.txt"  # 4 timeouts, the kernel undid all 4 recoveries
LOST = "machine-after.txt"  # 4 timeouts, none undone


@pytest.mark.parametrize(("after", "kind", "split"), [
    # the kernel undid every recovery: timers that fired while the segment still queued
    (SPURIOUS, "queued timeout",
     "4 fired while the segment was still queued (the kernel undid their recovery: the "
     "host or a queue, not a loss), none were losses outside the shapers"),
    # it undid none: losses outside the shapers
    (LOST, "elsewhere",
     "4 were losses outside the shapers (the overlay's socket buffers, a bridge, a veth), "
     "none fired while the segment was still queued"),
])
def test_timeouts_are_split_by_whether_the_kernel_undid_their_recovery(
        after: str, kind: str, split: str) -> None:
    said = attribute(captured(after), FIGURES)
    assert [c.kind for c in said.causes] == [kind]
    assert said.tail.startswith(
        f"Where the time went (p99 41.7 ms): of the machines' 4 timeouts, {split}: they "
        "retransmitted 25 segments though no shaper dropped a packet (dominant")
    assert "do not tell apart" not in said.tail


def test_a_mix_of_timeouts_names_the_larger_part_first() -> None:
    queued = attribute(captured(SPURIOUS, SPURIOUS, LOST), FIGURES)
    assert [c.kind for c in queued.causes] == ["queued timeout"]
    assert queued.tail.startswith(
        "Where the time went (p99 41.7 ms): of the machines' 12 timeouts, 8 fired while the "
        "segment was still queued (the kernel undid their recovery: the host or a queue, "
        "not a loss), 4 were losses outside the shapers (the overlay's socket buffers, a "
        "bridge, a veth): they retransmitted 75 segments though no shaper dropped a packet "
        "(dominant")
    lost = attribute(captured(SPURIOUS, LOST, LOST), FIGURES)
    assert [c.kind for c in lost.causes] == ["elsewhere"]
    assert lost.tail.startswith(
        "Where the time went (p99 41.7 ms): of the machines' 12 timeouts, 8 were losses "
        "outside the shapers (the overlay's socket buffers, a bridge, a veth), 4 fired while "
        "the segment was still queued (the kernel undid their recovery: the host or a "
        "queue, not a loss): they retransmitted 75 segments though no shaper dropped a "
        "packet (dominant")
    failed = replace(FIGURES, failed=3, errors={"timeout": 3}, failing=("agent1",))
    assert "of the machines' 12 timeouts, 8 were losses" in str(
        attribute(captured(SPURIOUS, LOST, LOST), failed).failures)


def test_an_f_rto_undo_is_counted_once_and_a_fast_recoverys_not_at_all() -> None:
    """tcp_try_undo_loss counts an undo by F-RTO in TCPLossUndo and TCPSpuriousRTOs
    both; TCPDSACKUndo counts recoveries begun without a timeout too."""
    node = TcpDelta("agent1", "machine", 1000, 40, 4, 0, 0, 0, spurious_rtos=1,
                    dsack_recv=6, loss_undo=2, dsack_undo=3)
    said = attribute(PassCounters((), (node,)), FIGURES)
    assert "of the machines' 4 timeouts, 2 were losses outside the shapers" in said.tail
    assert ", 2 fired while the segment was still queued" in said.tail  # a tie: loss first


def test_a_kernel_without_the_undo_counters_cannot_tell_the_two_apart() -> None:
    old = captured(SPURIOUS, drop=("TCPLossUndo", "TCPSpuriousRTOs", "TCPDSACKUndo",
                                   "TCPDSACKRecv"))
    assert old.tcp[0].loss_undo is None and old.tcp[0].timeouts == 4
    said = attribute(old, FIGURES)
    assert [c.kind for c in said.causes] == ["elsewhere"]
    assert said.tail.startswith(
        "Where the time went (p99 41.7 ms): machines retransmitted 25 segments though no "
        "shaper dropped a packet: lost outside the shapers (the overlay's socket buffers, "
        "a bridge, a veth), or sent again while still queued (a timer shorter than the "
        "queue's wait), which these counters do not tell apart (dominant")


def test_a_handshakes_timeout_is_said_apart_as_the_kernel_never_undoes_it() -> None:
    """TCPTimeouts counts a SYN sent again (tcp_retransmit_timer) and a SYN-ACK
    (tcp_syn_ack_timeout); no undo counter ever takes one back, so before this split
    every one of them was called a loss outside the shapers. The recorded machine's
    counters, its handshakes' counter raised as a venue's statement burst raises it."""
    node = replace(captured(LOST).tcp[0], syn_retrans=3)  # 4 timeouts, none undone
    said = attribute(PassCounters((), (node,)), FIGURES)
    assert [c.kind for c in said.causes] == ["handshake timeout"]
    assert said.tail.startswith(
        "Where the time went (p99 41.7 ms): of the machines' 4 timeouts, 3 were handshakes "
        "sent again (a SYN or SYN-ACK unanswered for 1 s or more: its answer queued, or was "
        "lost; the kernel never undoes these), 1 was a loss outside the shapers (the "
        "overlay's socket buffers, a bridge, a veth), none fired while the segment was "
        "still queued: they retransmitted 25 segments though no shaper dropped a packet")
    failed = replace(FIGURES, failed=3, errors={"connect": 3}, failing=("agent1",))
    assert "3 were handshakes sent again" in str(attribute(PassCounters((), (node,)),
                                                           failed).failures)


def test_the_undone_are_counted_among_the_timeouts_that_were_no_handshake() -> None:
    """A node's undo counter cannot take back more than its timeouts but its
    handshakes: 4 timeouts, 3 handshakes, 2 undone is 1 queued and no loss."""
    node = replace(captured(SPURIOUS).tcp[0], syn_retrans=3, loss_undo=2)
    said = attribute(PassCounters((), (node,)), FIGURES)
    assert "of the machines' 4 timeouts, 3 were handshakes sent again" in said.tail
    assert ("the kernel never undoes these), 1 fired while the segment was still queued "
            "(the kernel undid their recovery: the host or a queue, not a loss), none were "
            "losses outside the shapers") in said.tail


def test_the_handshakes_counter_is_read_from_the_kernels_and_none_where_it_lacks_it(
        ) -> None:
    assert captured(LOST).tcp[0].syn_retrans == 0  # in the recorded namespace's netstat
    old = captured(LOST, drop=("TCPSynRetrans",))
    assert old.tcp[0].syn_retrans is None
    assert "handshake" not in attribute(old, FIGURES).tail
