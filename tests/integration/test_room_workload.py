"""The room under a workload on a real engine: an at-once event against a shaped link
(bounds from the link's mechanism, tbf's rate, not from this host's speed); pages
over HTTPS and uploads, every one answered, handshakes resumed, no key left."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.conftest import leftovers, room_records, stands
from vnetbench.analysis.results import load_results, named
from vnetbench.model.topology import parse_topology
from vnetbench.runs.session import run_scenarios
from vnetbench.runtime.scratch import private_keys_under, scratch_root
from vnetbench.scenarios import get_scenario

pytestmark = pytest.mark.integration

MACHINES = 50
STATEMENT = 2 * 1024 * 1024
RATE_BPS = 100e6
# Every byte of every machine's statement leaves the server through its site link,
# shaped to 100 Mbit/s: the last machine cannot have its copy sooner than this.
LINK_BOUND_S = MACHINES * STATEMENT * 8 / RATE_BPS  # 8.39 s
# tbf counts whole frames: a full-sized segment is 1514 bytes on the wire for 1448 of
# reply (IP, TCP with timestamps, Ethernet), so the reply's bytes arrive at 95.6 % of
# the rate (8.77 s). Issue #37 asks for the last machine within 15 % of the link's
# bound on the baseline: the framing's 4.5 %, then TCP's starts and the 50 connections'
# handshakes within the rest.
WITHIN = 1.15

BURST = {"name": "burst", "timeout_s": 60, "phases": [
    {"name": "statement", "seconds": 15,
     "at_once": [{"name": "statement", "at_s": 0, "size": "2MiB"}]}]}


def test_the_statement_burst_takes_what_the_servers_link_allows(tmp_path: Path) -> None:
    """50 machines fetch a 2 MiB statement at one instant; the server's site link is
    shaped to 100 Mbit/s (the site profile shapes each agent's own interface, so the
    server's is the one every byte crosses)."""
    topology = parse_topology(
        {"name": "it-burst", "switches": 2, "agents": 2,
         "links": {"site": {"rate": "100mbit"}}, "workload": BURST,
         "settings": {"passes": 1, "machines": MACHINES}}, "test", overrides={})
    directory = run_scenarios(topology, [get_scenario("room")], tmp_path)
    assert leftovers(directory.name) == []
    frame = named(load_results(directory))
    assert frame["status"].map(stands).all(), frame["status"].iloc[0]
    value = frame.set_index("metric")["value"]
    assert value["room_burst_unfinished_statement"] == 0
    last_s = value["room_burst_last_ms_statement"] / 1000
    print(f"the last of {MACHINES} machines had its statement after {last_s:.2f} s "
          f"(the link's bound {LINK_BOUND_S:.2f} s)")
    assert LINK_BOUND_S <= last_s <= WITHIN * LINK_BOUND_S
    # however the link is shared, by the time k machines have their copy k copies have
    # crossed it: the median machine (the 25th of 50 done) waited for 25 at least
    assert value["room_burst_p50_ms_statement"] / 1000 >= LINK_BOUND_S * 25 / MACHINES
    # the room's goodput is every byte received over the load's span: each crossed the
    # link, so no more than its rate plus tbf's bucket (4 ms of it) over the span. (The
    # machines' own rates summed read 158 Mbit/s here once: each over its own copy's span)
    span_s = value["room_burst_last_ms_statement"] / 1000  # the load's span is longer
    print(f"room goodput {value['room_goodput_mbit']:.1f} Mbit/s")
    assert 0 < value["room_goodput_mbit"] * 1e6 <= RATE_BPS * (1 + 0.004 / span_s)
    # the room ended when its last statement did, not 60 s (its timeout) after the
    # instant: every machine was released by the barrier, which only lets go once all
    # 50 have come, each when its request had ended
    records = room_records(directory)
    assert len(records) == MACHINES
    last = max(record["ended"] for record in records)
    assert all(last <= record["released"] < record["planned"] + 60 for record in records)


# A short contest under one fault, on the baseline: the machines on switch1, the
# server on switch2, so every request crosses the backbone. The backbone is down 1 s
# from 3 s in (drop rules staged where they act: in effect within 20 ms of the
# instant); the statement's at-once event is due at 3.5 s, inside it.
FAULTED = {"name": "faulted", "timeout_s": 5, "phases": [
    {"name": "statement", "seconds": 8,
     "at_once": [{"name": "statement", "at_s": 3.5, "size": "256KiB"}],
     "mix": [{"name": "scoreboard", "size": "20KiB", "rate": 5}]},
    {"name": "end-rush", "seconds": 6,
     "mix": [{"name": "submission", "size": "4KiB", "rate": 5}]}]}
FAULTED_MACHINES = 6
DOWN = {"at": "3s", "link": "backbone", "for": "1s"}
# a lift is stamped when its iptables call returned, the flush in effect before: a
# packet may pass that much before the stamp (an exec'd call's span beside a load:
# 20-53 ms seen, test_room.py IPTABLES_CALL_MS)
CALL_MS = 60.0


def test_a_workload_under_a_backbone_fault_has_rows_per_phase_and_for_the_burst(
        tmp_path: Path) -> None:
    topology = parse_topology(
        {"name": "it-faulted", "switches": 2, "agents": 2, "workload": FAULTED,
         "faults": [DOWN], "settings": {"passes": 1, "machines": FAULTED_MACHINES}},
        "test", overrides={})
    directory = run_scenarios(topology, [get_scenario("room")], tmp_path)
    assert leftovers(directory.name) == []
    frame = named(load_results(directory))
    rows = frame[frame["interval_s"].isna()]
    assert stands(rows["status"].iloc[0]), rows["status"].iloc[0]
    value = rows.set_index("metric")["value"]
    fault = "backbone-down"
    at_s, end_s = value[f"room_fault_at_s_{fault}"], value[f"room_fault_end_s_{fault}"]
    held_ms = value[f"room_fault_held_ms_{fault}"]
    assert at_s < 3.5 < end_s  # the burst's instant lay inside the fault, as declared
    # the statement phase's scoreboard, 5/s from each machine, evenly: the requests due
    # while the link was down are at most the held span's share, plus one a machine
    during = value[f"room_fault_phase_requests_{fault}_statement"]
    assert 1 <= during <= FAULTED_MACHINES * (held_ms / 1000 * 5 + 1)
    # a request due in the first half of the fault is answered after the lift at the
    # soonest: under 100 requests a p99 is their latest, so it is at least half the
    # span unless those requests got no answer at all
    p99 = value[f"room_fault_phase_p99_ms_{fault}_statement"]
    unanswered = (value[f"room_fault_phase_failed_{fault}_statement"]
                  + value[f"room_fault_phase_timeouts_{fault}_statement"])
    assert unanswered >= 1 or p99 >= held_ms / 2 - CALL_MS, (p99, unanswered)
    # the end rush (from 8 s) lies within the 10 s after the lift: it has its row, and
    # none of its requests was due while the link was down
    assert value[f"room_fault_phase_requests_{fault}_end-rush"] == 0
    for phase in ("statement", "end-rush"):
        recovery = value[f"room_fault_phase_recovery_ms_{fault}_{phase}"]
        # judged over windows up to 10 s after the lift (measure/room_faults.py AFTER_S)
        assert recovery != recovery or 0 <= recovery <= 10_000  # NaN: not back, or no band
    # the statement burst, caught: no machine had its object before the lift (100 %
    # dropped), and each had it within its timeout (5 s): TCP's retransmissions (a
    # SYN after 1 s, data from 200 ms, doubling) land after a 1 s outage
    last_ms = value[f"room_fault_burst_last_ms_{fault}_statement"]
    assert (end_s - 3.5) * 1000 - CALL_MS <= last_ms <= 5000
    assert value[f"room_fault_burst_unfinished_{fault}_statement"] == 0
    assert value["room_burst_last_ms_statement"] == last_ms  # the same burst, its row
    # the whole room's row for the event stands beside them
    assert value[f"room_fault_requests_{fault}"] >= during


# A short contest over HTTPS on the baseline: every machine fetches the statement over
# TLS at the instant, polls the scoreboard over TLS and uploads submissions over TLS,
# on new connections (one handshake a request); a plain download beside them.
UPLOAD = 100 * 1024
HTTPS_MACHINES = 4
HTTPS = {"name": "https", "timeout_s": 10, "phases": [
    {"name": "pages", "seconds": 6,
     "at_once": [{"name": "statement", "at_s": 0, "size": "256KiB", "scheme": "https"}],
     "mix": [{"name": "scoreboard", "size": "20KiB", "rate": 2, "scheme": "https",
              "connection": "new"},
             {"name": "submission", "upload": UPLOAD, "rate": 1, "scheme": "https",
              "connection": "new"},
             {"name": "plain", "size": 1000, "rate": 1, "connection": "new"}]}]}


def test_pages_over_https_resume_their_sessions_and_uploads_arrive_whole(
        tmp_path: Path) -> None:
    """Every request answered; each machine's first handshake full and later ones
    resumed (its latest ticket offered); each upload's bytes read whole by nginx (its
    reply says so, the generator checks it); the server's key gone with the run."""
    topology = parse_topology(
        {"name": "it-https", "switches": 2, "agents": 2, "workload": HTTPS,
         "settings": {"passes": 1, "machines": HTTPS_MACHINES}}, "test", overrides={})
    directory = run_scenarios(topology, [get_scenario("room")], tmp_path)
    assert leftovers(directory.name) == []
    assert private_keys_under(directory) == []
    assert not (scratch_root() / directory.name).exists()
    frame = named(load_results(directory))
    assert frame["status"].map(stands).all(), frame["status"].iloc[0]
    value = frame.set_index("metric")["value"]
    planned = value["room_phase_planned_pages"]
    assert planned > 0 and value["room_phase_answered_pages"] == planned
    assert value["room_phase_failed_pages"] == 0
    assert value["room_burst_unfinished_statement"] == 0
    # new connections: every TLS request opened one, so its handshakes are the TLS
    # requests, full for (at least) each machine's first, resumed for most of the rest
    full = value["room_phase_tls_full_pages"] + value["room_burst_tls_full_statement"]
    resumed = (value["room_phase_tls_resumed_pages"]
               + value["room_burst_tls_resumed_statement"])
    records = room_records(directory)
    assert len(records) == HTTPS_MACHINES
    tls_requests = 0
    for record in records:
        columns, targets = record["columns"], record["sizes"]
        target = [str(targets[index]) for index in columns["size_index"]]
        assert columns["error"] == [None] * len(target), record.get("errors_said")
        tls = [n for n, t in enumerate(target) if t.startswith("s")]
        tls_requests += len(tls)
        assert all(columns["handshake"][n] in ("full", "resumed") for n in tls)
        assert all(columns["handshake"][n] is None for n, t in enumerate(target)
                   if not t.startswith("s"))
        first = min(tls, key=lambda n: columns["sent_us"][n])
        assert columns["handshake"][first] == "full"  # nothing to resume yet
        assert "resumed" in columns["handshake"]  # later ones offered its latest ticket
        # each upload's bytes are those nginx said it read: the whole body
        uploads = [n for n, t in enumerate(target) if t == f"su{UPLOAD}"]
        assert uploads and all(columns["bytes"][n] == UPLOAD for n in uploads)
    assert full + resumed == tls_requests
    assert full >= HTTPS_MACHINES and resumed > 0
    print(f"{tls_requests} TLS requests: {full:.0f} full handshakes, {resumed:.0f} resumed; "
          f"opening p99 {value['room_phase_tls_connect_p99_ms_pages']:.1f} ms")
