"""room and capacity on a real engine, short. Bounds come from the mechanism (a closed
loop with a pause, the same replies for every machine), never a speed: this is a
shared 2-core machine."""

from __future__ import annotations

import json
import threading
import time
from contextlib import suppress
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from python_on_whales import Container, docker
from python_on_whales.exceptions import NoSuchContainer

from tests.integration.conftest import leftovers, stands
from vnetbench.analysis.results import load_results, named
from vnetbench.measure.room import MARK as ROOM_MARK
from vnetbench.model.topology import parse_topology
from vnetbench.runs.plan import Task
from vnetbench.runs.session import run_scenarios, run_tasks
from vnetbench.scenarios import get_scenario

pytestmark = pytest.mark.integration

MACHINES, RATE, SECONDS = 6, 10, 2
SETTINGS = {"passes": 1, "seconds": SECONDS, "machines": MACHINES, "room_rate": RATE}
LOOPS = ("open", "closed")


def room_topology(**extra: object) -> object:
    return parse_topology({"name": "it-room", "switches": 2, "agents": 2,
                           "settings": SETTINGS, **extra}, "test", overrides={})


def rooms_on_one_stack(directory: Path, **settings: object) -> Path:
    """The open loop's room, then the closed loop's, on one stack: one bring-up and
    teardown instead of two. A room's server and machines are probes removed when its
    pass ends (Room.shares_stack), and the loop and the length are measurement settings,
    so the two rooms' stacks are one (one task group, as a method's steps); each room's
    rows carry its loop as their variant, its raw output in raw/LOOP/."""
    tasks = [Task(get_scenario("room"), parse_topology(
        {"name": "it-room", "switches": 2, "agents": 2,
         "settings": {**SETTINGS, **settings, "room_loop": loop}}, "test", overrides={}),
        variant=loop, group="rooms") for loop in LOOPS]
    run_dir = run_tasks(tasks, directory)
    assert leftovers(run_dir.name) == []
    [stack] = json.loads((run_dir / "run.json").read_text())["timings"]  # one, shared
    assert len(stack["cells"]) == 2, stack
    return run_dir


def room_of(run_dir: Path, loop: str) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """The loop's room: its rows, and each machine's own record of it."""
    frame = named(load_results(run_dir))
    frame = frame[frame["variant"] == loop]
    assert not frame.empty, loop
    records = [json.loads(path.read_text().split(ROOM_MARK, 1)[1])
               for path in run_dir.rglob(f"raw/{loop}/room-pass1-agent*.txt")]
    return frame, records


@pytest.fixture(scope="module")
def steady_rooms(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The two steady rooms' run: the open loop's test and the closed loop's read it."""
    return rooms_on_one_stack(tmp_path_factory.mktemp("rooms"))


def test_a_room_on_the_baseline(steady_rooms: Path) -> None:
    frame, records = room_of(steady_rooms, "open")
    assert frame["status"].map(stands).all(), frame["status"].iloc[0]
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
    # the open loop's fairness is over each machine's share of its schedule answered:
    # every machine got all of its answers (above), so Jain's index is exactly 1
    assert value["room_fairness"] == pytest.approx(1.0)
    assert value["room_goodput_mbit"] > 0 and value["room_cpu_switch_percent"] >= 0
    assert value["mem_agent_load_mib"] > 0 and value["mem_switch_idle_mib"] > 0
    assert len(records) == MACHINES
    firsts = [r["columns"]["scheduled_us"][0] / 1e6 for r in records]
    # the first requests spread over one gap (1/RATE), not all at once
    assert 0 < max(firsts) - min(firsts) < 1 / RATE


def test_the_closed_loop_still_runs_wrk(steady_rooms: Path) -> None:
    frame, records = room_of(steady_rooms, "closed")
    assert frame["status"].map(stands).all(), frame["status"].iloc[0]
    value = frame.set_index("metric")["value"]
    # each machine waits 1/RATE after every reply: in SECONDS it asks at most
    # RATE x SECONDS + 1 times, and it asked at least once
    assert MACHINES <= value["room_answered"] <= MACHINES * (RATE * SECONDS + 1)
    assert "room_planned" not in value
    assert records, "each machine keeps its record"
    starts = [r["planned"] for r in records]
    # the first requests spread over one pause (1/RATE), not all at once
    assert 0 < max(starts) - min(starts) < 1 / RATE


def test_a_room_whose_path_delivers_nothing_is_dead_in_bounded_time(tmp_path: Path) -> None:
    topology = room_topology(links={"backbone": {"loss": "100%"}})
    directory = run_scenarios(topology, [get_scenario("room")], tmp_path)
    assert leftovers(directory.name) == []
    frame = named(load_results(directory))
    assert set(frame["state"]) == {"path dead"}
    assert "no request of 6 machines was answered" in frame["status"].iloc[0]


# The server paused for PAUSE_S, PAUSE_AT_S into a room of PAUSED_SECONDS at RATE.
PAUSE_AT_S, PAUSE_S, PAUSED_SECONDS = 2.0, 1.0, 6


def own_containers(named: str) -> list[Container]:
    """This module's rooms' containers whose name holds `named` (another test's room may
    run beside it: make test runs two tests at once). A container listed, then removed
    before its name is read (the room before's probes go as this one starts: the client
    library inspects it again to read the name) is not one."""
    found = []
    for container in docker.container.list(filters=[("name", named)]):
        with suppress(NoSuchContainer):
            if container.name.startswith("it-room-"):
                found.append(container)
    return found


def pause_each_server(stop: threading.Event, paused: list[list[float]]) -> None:
    """For each room in turn, once its probes exist (a server not seen before: a room's
    server and machines are removed before the next room starts), read the room's
    instant from a machine's command (`vnetbench-room open|client INSTANT ...`, or a
    generator's `many @MACHINE:PID INSTANT ...`), freeze
    the server's container (nginx and all: the cgroup freezer) PAUSE_AT_S after it, for
    PAUSE_S; the moments of each room's pause in its list of `paused`."""
    seen: set[str] = set()
    for moments in paused:
        server = client = None
        command: list[str] = []
        while not stop.is_set() and (server is None or client is None):
            try:
                server = next((c for c in own_containers("-room-1-server")
                               if c.id not in seen), None)
                # the closed loop's probe of a machine, or the open loop's generator of
                # a switch's machines (scenarios/room/generators.py)
                client = next(iter([*own_containers("-room-1-agent"),
                                    *own_containers("-room-1-generator")]), None)
                command = list(client.config.cmd or []) if client else []
            except NoSuchContainer:  # the room before's, removed while it was read
                server = client = None
            time.sleep(0.05)
        if server is None or client is None:
            return
        seen.add(server.id)
        mode = next(i for i, word in enumerate(command)
                    if word in ("open", "client") or word.startswith("@"))
        time.sleep(max(0.0, float(command[mode + 1]) + PAUSE_AT_S - time.time()))
        moments.append(time.time())  # the freeze takes effect within the pause call
        docker.container.pause(server)
        moments.append(time.time())
        time.sleep(PAUSE_S)
        docker.container.unpause(server)
        moments.append(time.time())


def rooms_with_a_paused_server(tmp_path: Path) -> dict[str, tuple[pd.Series, list[float]]]:
    """The open loop's room and the closed loop's on one stack (rooms_on_one_stack), the
    server paused in each: by loop, the room's figures and its pause's moments."""
    stop = threading.Event()
    paused: list[list[float]] = [[] for _ in LOOPS]
    pauser = threading.Thread(target=pause_each_server, args=(stop, paused))
    pauser.start()
    try:
        directory = rooms_on_one_stack(tmp_path, seconds=PAUSED_SECONDS)
    finally:
        stop.set()
        pauser.join()
    return {loop: (room_of(directory, loop)[0].set_index("metric")["value"], moments)
            for loop, moments in zip(LOOPS, paused, strict=True)}


def test_a_paused_server_counts_in_the_open_loop_and_thins_the_closed_one(
        tmp_path: Path) -> None:
    """Coordinated omission, measured. The open loop keeps sending on its schedule
    while the server is frozen: RATE x PAUSE_S requests per machine (1/6 of the
    room's) wait, uniformly 0 to PAUSE_S, so the top 5 % of the room's latencies are
    all paused ones and p95 is about PAUSE_S x (1 - 0.05 x 6) = 0.7 s; the issue's
    bound, 40 % of the pause, leaves room for a late pause. The closed loop sends
    nothing while its one request waits: each machine asks about RATE x PAUSE_S - 1
    times less. (Its p95 is not bounded here: wrk corrects its histogram for a stall
    over twice the achieved interval, 2 x 100 ms at this rate, adding the requests
    the machine would have sent, so a 1 s stall shows in its percentiles as well;
    the under-count the issue describes is a stall shorter than that.)"""
    rooms = rooms_with_a_paused_server(tmp_path)
    opened, paused = rooms["open"]
    assert len(paused) == 3 and paused[2] - paused[1] >= PAUSE_S
    planned = MACHINES * RATE * PAUSED_SECONDS
    assert opened["room_planned"] == opened["room_sent"] == planned
    # every request is answered or failed; all answered when the freeze (at most from
    # the pause call's start to the unpause call's return: 1 s plus two engine calls)
    # stayed under the 2 s timeout, less a request's own service time
    assert opened["room_answered"] >= planned - opened["room_failed"]
    if paused[2] - paused[0] < 2.0 - 0.1:
        assert opened["room_answered"] == planned
    assert opened["room_p95_ms"] >= 0.4 * PAUSE_S * 1000
    assert opened["room_max_ms"] >= 0.9 * PAUSE_S * 1000

    closed, paused = rooms["closed"]
    assert len(paused) == 3
    # without the pause a machine asks at most RATE x seconds + 1 times (the closed
    # loop test above); frozen, it asks RATE x PAUSE_S - 1 fewer, less a request of slack
    fewer = MACHINES * (RATE * PAUSE_S - 2)
    assert closed["room_answered"] <= MACHINES * (RATE * PAUSED_SECONDS + 1) - fewer
    print(f"paused server, {MACHINES} machines at {RATE}/s for {PAUSED_SECONDS} s: open p95 "
          f"{opened['room_p95_ms']:.0f} ms, answered {opened['room_answered']:.0f}; closed "
          f"p95 {closed['room_p95_ms']:.0f} ms, answered {closed['room_answered']:.0f}")


# A schedule of faults during the room (vnetbench/faults/executor.py), on the
# baseline: 3 switches, the machines on switch1 and switch2, the server on switch3.
# Each event begins after the one before has ended: a staged event (the flap, the
# partition, the ramp) fires within 20 ms of its instants, so 0.8 s after the flap's
# last up and 1 s after the partition's lift are ample; the churn's restarts and the
# kill's are engine calls (about a second each on this host), 2 s allowed after each.
# The first event 2 s in (the room's band before a fault is read after its warm-up,
# measure/room_faults.py WARMUP_S); the room runs 1.5 s past the ramp's lift, its
# 14 s (was 16, the events 1-2 s further apart) 140 timeline bins of the 100 asked.
SCHEDULE = [
    {"at": "2s", "flap": "backbone", "times": 2, "down": "400ms", "up": "400ms"},
    {"at": "4s", "partition": [["switch1"], ["switch2", "switch3"]], "for": "1s"},
    {"at": "6s", "churn": "25%", "over": "1s"},
    {"at": "9s", "kill": "server", "restart_after": "1s"},
    {"at": "11s", "ramp": "loss", "from": "0%", "to": "30%", "over": "1s", "hold": "500ms"},
]
SCHEDULE_SECONDS = 14
# declared spans of the staged events: the flap 2 x 400 ms + 400 ms, the partition 1 s,
# the loss ramp 1 s and its last level held 500 ms
STAGED_MS = {"backbone-flap": 1200.0, "partition": 1000.0, "loss-ramp": 1500.0}
# a staged step waits where it acts and fires within a scheduler period of its instant
# (faults/window.py LATE_BOUND_S): the bound on an outage's excess
STAGED_EXCESS_MS = 50.0
IPTABLES_CALL_MS = 60.0  # an exec'd iptables call's span beside the load: 20-53 ms seen


def test_a_schedule_of_faults_runs_during_the_room_each_event_stamped(
        tmp_path: Path) -> None:
    topology = parse_topology({"name": "it-room", "switches": 3, "agents": 2, "settings": {
        **SETTINGS, "machines": 8, "seconds": SCHEDULE_SECONDS}, "faults": SCHEDULE}, "test",
        overrides={})
    directory = run_scenarios(topology, [get_scenario("room")], tmp_path)
    assert leftovers(directory.name) == []
    frame = named(load_results(directory))
    rows = frame[frame["interval_s"].isna()]
    assert stands(rows["status"].iloc[0]), rows["status"].iloc[0]
    value = rows.set_index("metric")["value"]
    labels = ("backbone-flap", "partition", "churn", "server-restart", "loss-ramp")
    for label in labels:  # each took effect and was lifted, in the load's order
        assert value[f"room_fault_at_s_{label}"] < value[f"room_fault_end_s_{label}"]
    starts = [value[f"room_fault_at_s_{label}"] for label in labels]
    assert starts == sorted(starts) and starts[0] >= 2.0
    for label, declared in STAGED_MS.items():
        held = value[f"room_fault_held_ms_{label}"]
        # held: the lift's stamp less the apply's, each taken when its iptables call
        # returned; either may be the later past its instant (a call took 20-53 ms on
        # a loaded host: a loss ramp's apply once 53 ms longer than its lift), so the
        # staged bound plus a call's span, a side each
        assert abs(held - declared) <= STAGED_EXCESS_MS + IPTABLES_CALL_MS, (label, held)
        assert value[f"room_fault_declared_ms_{label}"] == declared
    # the partition cut switch1's machines from the server for 1 s: a request of theirs
    # due as it began waited for the lift (or failed): the room's p99 during it shows it
    assert (value["room_fault_p99_ms_partition"] >= 500
            or value["room_fault_failed_partition"] + value["room_fault_timeouts_partition"])
    # the churned machines (2 of 8) ran a second generator after their start, joined
    raw = directory / "room" / "raw"
    assert len(list(raw.glob("room-pass1-agent*-2.txt"))) == 2
    assert value["room_machines"] == 8 and value["room_no_record"] == 0
    # the staged helpers' output is kept, one per backbone edge
    assert len(list(raw.glob("room-pass1-schedule-fault-*.txt"))) == 3
    timeline = frame[frame["metric"] == "room_timeline_answered"]
    assert len(timeline) >= 100 and timeline["interval_s"].is_monotonic_increasing


def test_capacity_searches_to_its_bound_says_each_step_and_its_json_is_stdout(
        tmp_path: Path) -> None:
    """capacity --json on a real search of two steps (one search for both readers):
    nothing fails and nothing takes 5 s on an idle path, so doubling reaches the bound;
    stdout is one document, valid against its schema, with every step's line on
    stderr, and the run directory holds each step's rows and the plot."""
    import os
    import subprocess
    import sys

    import jsonschema
    import yaml

    from vnetbench.generators.fileschemas import shipped

    (tmp_path / "t.yml").write_text(yaml.safe_dump({
        "name": "it-room", "switches": 2, "agents": 2, "settings": SETTINGS}))
    done = subprocess.run([sys.executable, "-m", "vnetbench", "capacity", "--slo",
                           "failed=0,p99=5s", "-t", "t.yml", "--start", "2", "--max", "4",
                           "--passes", "1", "--seconds", "2", "--out", "out", "--json"],
                          cwd=tmp_path,
                          capture_output=True, text=True, timeout=900,
                          env={**os.environ, "BENCH_SECONDS": ""})
    assert done.returncode == 0, done.stderr[-2000:]
    document = json.loads(done.stdout)
    jsonschema.validate(document, shipped("capacity.schema.json"))
    assert [(s["size"], s["met"]) for s in document["steps"]] == [(2, True), (4, True)]
    assert (document["largest"], document["smallest_missed"]) == (4, None)
    assert "capacity step: machines=2" in done.stderr
    (directory,) = (tmp_path / "out").iterdir()
    header = json.loads((directory / "run.json").read_text())
    assert header["status"] == "completed" and header["largest"] == 4
    assert [step["size"] for step in header["steps"]] == [2, 4]
    frame: pd.DataFrame = named(load_results(directory))
    assert sorted(frame["var_machines"].unique()) == [2, 4]
    assert (directory / "capacity.png").stat().st_size > 5000
    for run_id in frame["run_id"].unique():
        assert leftovers(run_id) == []
