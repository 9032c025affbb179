"""The outage, lost probes and TCP stall read from real output: baseline's switch2
router killed and started again after 3 s, under `ping -D -O -i 0.01` from the other
switch and an iperf3 stream at 10 Mbit/s reported every 0.1 s (one failover pass)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vnetbench.measure.outage import (
    answered_bins,
    answered_steadily,
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


# the same scenario's loss burst (50 % for 2 s on the backbone), from the other switch:
# the fault's two steps as its helper stamped them
BURST_AT, BURST_LIFTED = 1796594885.320754, 1796594887.340586


def stamped_until(text: str, until: float) -> str:
    """The trace as it read `until` (its lines stamped later left out)."""
    return "\n".join(line for line in text.splitlines()
                     if not line.startswith("[") or float(line[1:line.index("]")]) <= until)


def test_a_loss_burst_has_ended_once_every_probe_is_answered_for_a_second_after_it() -> None:
    text = (DATA / "ping-remote-loss-burst.txt").read_text()
    trace = parse_ping_trace(text)
    # why outage_of's gap cannot tell it: the longest one lies inside the burst, more
    # than a second before its end (so failover waited out its whole window for it)
    outage = outage_of(trace, BURST_AT, 0.01)
    assert outage is not None and outage.after is not None
    assert BURST_AT < outage.after.at < BURST_LIFTED - 1
    for seconds_after, steady in ((0.5, False), (0.9, False), (1.2, True), (5, True)):
        now = parse_ping_trace(stamped_until(text, BURST_LIFTED + seconds_after))
        assert answered_steadily(now, BURST_LIFTED, 1.0) is steady, seconds_after
    # during the burst probes were lost: never steady, however long it is counted from
    during = parse_ping_trace(stamped_until(text, BURST_LIFTED))
    assert not answered_steadily(during, BURST_AT, 1.0)
    assert not answered_steadily(during, BURST_AT, 0.5)


def test_a_probe_unanswered_at_the_end_is_not_steady() -> None:
    text = (DATA / "ping-remote-loss-burst.txt").read_text()
    seq = parse_ping_trace(text).last_seq
    trace = parse_ping_trace(text + f"\n[1796594902.7] no answer yet for icmp_seq={seq + 1}")
    assert not answered_steadily(trace, BURST_LIFTED, 1.0)


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
