"""The room under a workload on a real engine: an at-once event against a shaped link.
Bounds come from the link's mechanism (tbf's rate), not from this host's speed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.conftest import leftovers, room_records, stands
from vnetbench.analysis.results import load_results, named
from vnetbench.model.topology import parse_topology
from vnetbench.runs.session import run_scenarios
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
