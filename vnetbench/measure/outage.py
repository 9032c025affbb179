"""Reading isochronous probes through a fault: `ping -D -O` (every reply stamped with
the clock it arrived by, every unanswered probe said when the next one goes) and an
iperf3 stream reported every 0.1 s, and the outage and stall in them.

The outage is a gap between answers: from the last probe answered before it to the
first answered after, and the probes lost in between. Of a trace, the longest gap
that ends after the fault was injected (less a slack for the two clocks: the fault's
is the host's, the stamps the probe's namespace's) is the fault's outage; a gap no
longer than a few intervals is no outage at all (what a busy host's scheduling gives).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import pairwise

REPLY = re.compile(r"^\[(?P<t>\d+\.\d+)\] \d+ bytes from [^:]+: icmp_seq=(?P<seq>\d+)"
                   r".*? time=(?P<rtt>[\d.]+) ms(?P<dup> \(DUP!\))?")
NO_ANSWER = re.compile(r"^\[(?P<t>\d+\.\d+)\] no answer yet for icmp_seq=(?P<seq>\d+)")
OTHER = re.compile(r"^\[(?P<t>\d+\.\d+)\] From \S+ icmp_seq=(?P<seq>\d+) (?P<what>.*)")
CLOCK_SLACK_S = 1.0  # the fault's instant against the stamps' clock (a swarm's nodes)
GAP_INTERVALS = 3  # a gap of up to 3 intervals is scheduling, not an outage


@dataclass(frozen=True)
class Reply:
    seq: int
    at: float  # epoch seconds the reply arrived (ping -D)
    rtt_ms: float


@dataclass(frozen=True)
class ProbeTrace:
    """One `ping -D -O` run: the answered probes in order, and the last probe sent."""

    replies: list[Reply]
    last_seq: int  # the highest sequence number the output mentions
    last_at: float | None  # the last stamp in the output (answered or not)
    errors: list[str] = field(default_factory=list)  # ICMP errors ("Destination ...")

    @property
    def sent(self) -> int:
        return self.last_seq


def parse_ping_trace(text: str) -> ProbeTrace:
    """The answered probes of `ping -D -O` output (duplicates left out)."""
    replies: dict[int, Reply] = {}
    last_seq, last_at, errors = 0, None, []
    for line in text.splitlines():
        line = line.strip()
        if reply := REPLY.match(line):
            seq, at = int(reply["seq"]), float(reply["t"])
            if not reply["dup"] and seq not in replies:
                replies[seq] = Reply(seq, at, float(reply["rtt"]))
        elif (found := NO_ANSWER.match(line) or OTHER.match(line)):
            seq, at = int(found["seq"]), float(found["t"])
            if "what" in found.groupdict():
                errors.append(found["what"])
        else:
            continue
        last_seq, last_at = max(last_seq, seq), max(last_at or at, at)
    return ProbeTrace(sorted(replies.values(), key=lambda r: r.seq), last_seq, last_at, errors)


@dataclass(frozen=True)
class Outage:
    """The longest silence of a trace after the fault."""

    before: Reply | None  # the last answer before it
    after: Reply | None  # the first answer after it (None: it never answered again)
    ms: float  # the silence: answer to answer, or to the trace's end when never again
    lost: int  # probes sent in between and never answered
    answered_after: int  # probes answered after the fault

    @property
    def recovered(self) -> bool:
        return self.after is not None

    def is_outage(self, interval_s: float) -> bool:
        return not self.recovered or self.ms > GAP_INTERVALS * interval_s * 1000


def outage_of(trace: ProbeTrace, fault_at: float, interval_s: float,
              slack_s: float = CLOCK_SLACK_S) -> Outage | None:
    """The fault's outage in a trace (None: nothing was answered before the fault, so
    there is no gap to measure)."""
    answered = trace.replies
    before_fault = [r for r in answered if r.at <= fault_at]
    if not before_fault:
        return None
    after_fault = len([r for r in answered if r.at > fault_at])
    pairs = [(a, b) for a, b in pairwise(answered)
             if b.at > fault_at - slack_s]
    last = answered[-1]
    end = trace.last_at or last.at
    never = Outage(last, None, (end - last.at) * 1000, trace.last_seq - last.seq, after_fault)
    if last.at <= fault_at:  # nothing answered after the fault
        return never
    a, b = max(pairs, key=lambda pair: pair[1].at - pair[0].at)
    found = Outage(a, b, (b.at - a.at) * 1000, b.seq - a.seq - 1, after_fault)
    # silence at the trace's end longer than any gap: it went down again for good
    return never if never.ms > found.ms and never.lost > 0 and never.is_outage(
        interval_s) else found


def answered_steadily(trace: ProbeTrace, since: float, steady_s: float) -> bool:
    """Has every probe been answered for the trace's last `steady_s`, all of them sent
    after `since` (a fault's end)? What tells a loss burst's end, where the longest
    gap (outage_of) lies inside the burst and says nothing of after it."""
    replies = trace.replies
    if not replies or replies[-1].seq != trace.last_seq:
        return False
    first = replies[-1]
    for earlier, later in reversed(list(pairwise(replies))):
        if later.seq != earlier.seq + 1 or earlier.at < since:
            break
        first = earlier
    return first.at >= since and replies[-1].at - first.at >= steady_s


def answered_bins(trace: ProbeTrace, start: float, bin_s: float = 0.1
                  ) -> list[tuple[float, float]]:
    """(end of bin, seconds since start; share of the probes sent in it answered), for
    the timeline plot: a probe is placed by its sequence number, 10 ms apart."""
    if not trace.replies or trace.last_seq == 0:
        return []
    first = trace.replies[0]
    interval = ((trace.replies[-1].at - first.at) / (trace.replies[-1].seq - first.seq)
                if len(trace.replies) > 1 and trace.replies[-1].seq > first.seq else 0.01)
    sent_at = {seq: first.at + (seq - first.seq) * interval for seq in
               range(1, trace.last_seq + 1)}
    answered = {r.seq for r in trace.replies}
    bins: dict[int, list[int]] = {}
    for seq, at in sent_at.items():
        if at >= start:
            bins.setdefault(int((at - start) / bin_s), []).append(int(seq in answered))
    return [(round((index + 1) * bin_s, 3), sum(v) / len(v)) for index, v in
            sorted(bins.items())]


INTERVAL_LINE = re.compile(
    r"^\[\s*\d+\]\s+(?P<start>[\d.]+)-(?P<end>[\d.]+)\s+sec\s+(?P<amount>[\d.]+)\s+"
    r"(?P<unit>[KMG]?)Bytes\s+[\d.]+\s+\w?bits/sec(?P<rest>.*)$")
UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30}


@dataclass(frozen=True)
class StreamTrace:
    """An iperf3 client's per-interval report (text, --forceflush), read as it ran."""

    intervals: list[tuple[float, float, int]]  # (start s, end s, bytes)
    error: str | None  # iperf3's own "iperf3: error - ..." line

    def longest_stall(self) -> tuple[float, int]:
        """The longest run of intervals that moved nothing: its seconds, and the index
        of the interval after it."""
        longest, after, run = 0.0, 0, 0.0
        for index, (start, end, moved) in enumerate(self.intervals):
            run = run + (end - start) if moved == 0 else 0.0
            if run > longest:
                longest, after = run, index + 1
        return longest, after

    @property
    def stall_s(self) -> float:
        return self.longest_stall()[0]

    @property
    def survived(self) -> bool:
        """The connection carried bytes again after its longest stall, and iperf3 did
        not give up on it (iperf3 never reconnects: bytes after a stall are the same
        connection's)."""
        if self.error or not self.intervals:
            return False
        stall, after = self.longest_stall()
        return stall == 0 or any(moved > 0 for _, _, moved in self.intervals[after:])


def parse_stream_trace(text: str) -> StreamTrace:
    intervals = []
    error = None
    for line in text.splitlines():
        if line.startswith("iperf3: error"):
            error = line.strip()
        found = INTERVAL_LINE.match(line.strip())
        if found and "sender" not in found["rest"] and "receiver" not in found["rest"]:
            moved = int(float(found["amount"]) * UNITS[found["unit"]])
            intervals.append((float(found["start"]), float(found["end"]), moved))
    return StreamTrace(intervals, error)
