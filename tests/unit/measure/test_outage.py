"""The outage, lost probes and TCP stall read from real output: baseline's switch2
router killed and started again after 3 s, under `ping -D -O -i 0.01` from the other
switch and an iperf3 stream at 10 Mbit/s reported every 0.1 s (one failover pass)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vnetbench.measure.outage import (
    answered_bins,
    outage_of,
    parse_ping_trace,
    parse_stream_trace,
)

DATA = Path(__file__).resolve().parents[2] / "data" / "failover"
KILLED_AT = 1796127228.37  # between the last answer (seq 176) and the first miss (177)


def test_the_outage_runs_from_the_last_answer_before_to_the_first_after() -> None:
    trace = parse_ping_trace((DATA / "ping-switch-restart.txt").read_text())
    outage = outage_of(trace, KILLED_AT, 0.01)
    assert outage is not None and outage.recovered
    assert outage.before is not None and outage.before.seq == 176
    assert outage.after is not None and outage.after.seq == outage.before.seq + outage.lost + 1
    # killed for 3 s: the router's restart and its routes come on top, never less
    assert 3000 <= outage.ms <= 3000 + 2000
    assert outage.lost == 199
    assert outage.is_outage(0.01)


def test_before_the_fault_there_is_no_gap_to_measure() -> None:
    trace = parse_ping_trace((DATA / "ping-switch-restart.txt").read_text())
    assert outage_of(trace, trace.replies[0].at - 5, 0.01) is None


def test_a_path_that_never_answers_again_is_an_outage_to_the_end() -> None:
    text = (DATA / "ping-switch-restart.txt").read_text()
    cut = [line for line in text.splitlines() if "icmp_seq=" not in line
           or int(line.split("icmp_seq=")[1].split()[0]) < 300]
    trace = parse_ping_trace("\n".join(cut))
    outage = outage_of(trace, KILLED_AT, 0.01)
    assert outage is not None and not outage.recovered
    assert outage.lost == trace.last_seq - 176


def test_a_same_switch_probe_through_a_backbone_loss_burst_saw_nothing() -> None:
    trace = parse_ping_trace((DATA / "ping-local-loss-burst.txt").read_text())
    outage = outage_of(trace, trace.replies[len(trace.replies) // 2].at, 0.01)
    assert outage is not None and outage.recovered and not outage.is_outage(0.01)


def test_the_timeline_bins_share_the_probes_answered() -> None:
    trace = parse_ping_trace((DATA / "ping-switch-restart.txt").read_text())
    bins = answered_bins(trace, trace.replies[0].at)
    shares = [share for _, share in bins]
    assert shares[0] == 1.0 and 0.0 in shares
    assert all(0 <= s <= 1 for s in shares)
    assert sum(1 for s in shares if s == 0) == pytest.approx(30, abs=6)  # ~3.3 s of 0.1 s


def test_the_stream_stalled_longer_than_the_path_and_survived() -> None:
    stream = parse_stream_trace((DATA / "iperf3-switch-restart.txt").read_text())
    assert stream.error is None and stream.survived
    # TCP's retransmission timer backs off through the outage: it resumes at its next
    # retry after the path is back, so the stall is at least the ping outage
    assert 3.3 <= stream.stall_s <= 10


def test_a_stream_iperf3_gave_up_on_did_not_survive() -> None:
    text = (DATA / "iperf3-switch-restart.txt").read_text()
    stream = parse_stream_trace(text + "\niperf3: error - control socket has closed "
                                "unexpectedly\n")
    assert not stream.survived and stream.error
