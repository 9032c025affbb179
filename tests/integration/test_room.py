"""room and capacity on a real engine, short. Bounds come from the mechanism (a closed
loop with a pause, the same replies for every machine), never a speed: this is a
shared 2-core machine."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tests.integration.conftest import as_measured, leftovers
from vnetbench.overlays import overlay_for
from vnetbench.results import load_results, named
from vnetbench.runs.capacity import CapacityPlan, parse_slo, run_capacity
from vnetbench.runs.session import run_scenarios
from vnetbench.scenarios import get_scenario
from vnetbench.topology import parse_topology

pytestmark = pytest.mark.integration

MACHINES, RATE, SECONDS = 6, 10, 2
SETTINGS = {"passes": 1, "seconds": SECONDS, "machines": MACHINES, "room_rate": RATE}


def room_topology(**extra: object) -> object:
    return parse_topology({"name": "it-room", "switches": 2, "agents": 2,
                           "settings": SETTINGS, **extra}, "test", overrides={})


def test_a_room_on_the_baseline(tmp_path: Path) -> None:
    directory = run_scenarios(room_topology(), [get_scenario("room")], tmp_path)
    assert leftovers(directory.name) == []
    frame = named(load_results(directory))
    assert frame["status"].map(as_measured).eq("ok").all(), frame["status"].iloc[0]
    value = frame.set_index("metric")["value"]
    assert value["room_machines"] == MACHINES and value["room_no_record"] == 0
    # the open loop (the default): each machine plans RATE x SECONDS requests and, on
    # an idle veth path, sends and gets an answer to every one
    planned = MACHINES * RATE * SECONDS
    assert value["room_planned"] == value["room_sent"] == value["room_answered"] == planned
    assert value["room_failed"] == 0  # nothing times out on an idle veth path
    assert value["room_generator_cpu_s_per_1000"] > 0 and value["room_generator_mib"] > 5
    assert value["room_p50_ms"] <= value["room_p95_ms"] <= value["room_p99_ms"] <= value[
        "room_max_ms"]
    cdf = [value[f"room_latency_q{q}_ms"] for q in ("1", "25", "50", "75", "99", "99.9")]
    assert cdf == sorted(cdf)
    # every machine asks for the same replies in the same order, so their goodputs
    # differ by a request or two of about 20: Jain's index is near 1 (1/6 if one had it all)
    assert value["room_fairness"] > 0.8
    assert value["room_goodput_mbit"] > 0 and value["room_cpu_switch_percent"] >= 0
    assert value["mem_agent_load_mib"] > 0 and value["mem_switch_idle_mib"] > 0
    records = list((directory / "room" / "raw").glob("room-pass1-agent*.txt"))
    assert len(records) == MACHINES
    firsts = [json.loads(r.read_text().split("vnetbench-room ", 1)[1])["columns"][
        "scheduled_us"][0] / 1e6 for r in records]
    # the first requests spread over one gap (1/RATE), not all at once
    assert 0 < max(firsts) - min(firsts) < 1 / RATE


def test_the_closed_loop_still_runs_wrk(tmp_path: Path) -> None:
    topology = parse_topology({"name": "it-room", "switches": 2, "agents": 2, "settings": {
        **SETTINGS, "room_loop": "closed"}}, "test", overrides={})
    directory = run_scenarios(topology, [get_scenario("room")], tmp_path)
    assert leftovers(directory.name) == []
    frame = named(load_results(directory))
    assert frame["status"].map(as_measured).eq("ok").all(), frame["status"].iloc[0]
    value = frame.set_index("metric")["value"]
    # each machine waits 1/RATE after every reply: in SECONDS it asks at most
    # RATE x SECONDS + 1 times, and it asked at least once
    assert MACHINES <= value["room_answered"] <= MACHINES * (RATE * SECONDS + 1)
    assert "room_planned" not in value
    records = list((directory / "room" / "raw").glob("room-pass1-agent*.txt"))
    starts = [json.loads(r.read_text().split("vnetbench-room ", 1)[1])["planned"]
              for r in records]
    # the first requests spread over one pause (1/RATE), not all at once
    assert 0 < max(starts) - min(starts) < 1 / RATE


def test_a_room_whose_path_delivers_nothing_is_dead_in_bounded_time(tmp_path: Path) -> None:
    topology = room_topology(links={"backbone": {"loss": "100%"}})
    directory = run_scenarios(topology, [get_scenario("room")], tmp_path)
    assert leftovers(directory.name) == []
    frame = named(load_results(directory))
    assert set(frame["state"]) == {"path dead"}
    assert "no request of 6 machines was answered" in frame["status"].iloc[0]


def test_capacity_searches_to_its_bound_and_says_each_step(tmp_path: Path) -> None:
    topology = room_topology()
    plan = CapacityPlan(topology, overlay_for(topology), parse_slo("failed=0,p99=5s"),
                        "machines", start=2, most=4)
    directory, search = run_capacity(plan, tmp_path)
    # nothing fails and nothing takes 5 s on an idle path: doubling reaches the bound
    assert [(s.size, s.met) for s in search.steps] == [(2.0, True), (4.0, True)]
    assert search.best() == 4
    header = json.loads((directory / "run.json").read_text())
    assert header["status"] == "completed" and header["largest"] == 4
    assert [step["size"] for step in header["steps"]] == [2, 4]
    frame: pd.DataFrame = named(load_results(directory))
    assert sorted(frame["var_machines"].unique()) == [2, 4]
    assert (directory / "capacity.png").stat().st_size > 5000
    for run_id in frame["run_id"].unique():
        assert leftovers(run_id) == []
