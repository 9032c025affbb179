"""The room under a workload, without an engine: refused before anything starts
when it cannot run (every problem at once), each machine's generator handed its
share of the plan, the settings it ran with, and its rows per phase and event."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.unit.test_cli_inputs import refused
from vnetbench.core.schema import EVENT, PHASE
from vnetbench.declared.room import DECLARATION, RoomSettings
from vnetbench.errors import UserError
from vnetbench.measure.room_faults import Request, requests_of
from vnetbench.model.topology import Topology, parse_topology
from vnetbench.scenarios import get_scenario
from vnetbench.scenarios.room.open_loop import decode
from vnetbench.scenarios.room.runtime import load_seconds
from vnetbench.scenarios.room.workload import (
    by_machine,
    workload_argv,
    workload_metrics,
    workload_notes,
    workload_problems,
)
from vnetbench.scenarios.room.workload_figures import (
    EventFigures,
    PhaseFigures,
    WorkloadFigures,
    workload_figures,
)
from vnetbench.scenarios.room.workload_schedule import plan_workload

ROOM = get_scenario("room")
FLAP = {"at": "2s", "flap": "backbone", "times": 2, "down": "1s", "up": "1s"}
CHURN = {"at": "2s", "churn": "50%", "over": "2s"}


def topology(workload: Any = "contest", faults: list[object] | None = None,
             **settings: object) -> Topology:
    return parse_topology({"name": "t", "switches": 3, "agents": 2, "workload": workload,
                           "settings": {"machines": 4, **settings},
                           "faults": faults or []}, "t")


def test_a_workload_that_cannot_run_is_refused_with_every_problem_at_once() -> None:
    ROOM.check(topology())
    mixed = {"phases": [{"name": "a", "seconds": 10, "mix": [
        {"name": "x", "size": 1, "rate": 1, "connection": "new"},
        {"name": "y", "size": 1, "rate": 1}]}]}
    bad = topology(mixed, faults=[FLAP, CHURN], room={"loop": "closed"})
    assert len(workload_problems(bad, bad.workload)) == 3  # type: ignore[arg-type]
    with pytest.raises(UserError) as caught:
        ROOM.check(bad)
    said = str(caught.value)
    assert "the room cannot run its workload (3 problem(s))" in said
    assert "  - a workload runs on the open loop" in said
    assert ("  - faults.1 (churn) starts room machines again, which a workload cannot "
            "follow") in said
    assert "  - the workload's kinds ask for both kept and new connections" in said


SHORT = {"name": "short", "phases": [
    {"name": "statement", "seconds": 20, "at_once": [{"name": "statement", "size": "2MiB"}],
     "mix": [{"name": "scoreboard", "size": "20KiB", "rate": 0.5}]},
    {"name": "end-rush", "seconds": 20, "mix": [{"name": "submission", "size": "4KiB",
                                                  "rate": 0.5}]}]}


@pytest.mark.parametrize("fault", [
    FLAP, {"at": "1s", "kill": "switch1", "restart_after": "3s"},
    {"at": "1s", "kill": "switch2"}, {"at": "25s", "link": "backbone", "for": "2s"},
    {"at": "1s", "loss": "50%", "for": "2s"}, {"at": "1s", "delay": "200ms", "for": "2s"},
    {"at": "1s", "kill": "server", "restart_after": "2s"},
    {"at": "1s", "ramp": "loss", "from": "0%", "to": "20%", "over": "2s"},
    {"at": "1s", "partition": [["switch1"], ["switch2", "switch3"]], "for": "2s"},
    {"at": "1s", "kill": {"machines": 1}}])  # for good: its share cut at the kill
def test_a_workload_runs_under_faults_that_start_no_machine_again(fault: object) -> None:
    """Every fault but a machine started again; the last one at 25 s lies past the
    settings' seconds (10) and within the workload's 40 s: the load's own length."""
    faulted = topology(SHORT, faults=[fault], seconds=10)
    assert workload_problems(faulted, faulted.workload) == []  # type: ignore[arg-type]
    ROOM.check(faulted)


def test_faults_must_end_within_the_workload_not_the_settings_seconds() -> None:
    late = topology(SHORT, faults=[{"at": "39s", "link": "backbone", "for": "2s"}],
                    seconds=60)
    with pytest.raises(UserError, match=r"its faults' last step comes 41 s after the "
                       r"room's load begins, and it lasts 40 s\. Give a longer load "
                       r"\(longer phases of its workload\)"):
        ROOM.check(late)


@pytest.mark.parametrize("fault", [
    {"at": "1s", "kill": {"machines": 2}, "restart_after": "2s"},
    {"at": "1s", "churn": "50%", "over": "2s"}])
def test_a_machine_started_again_under_a_workload_is_still_refused(
        fault: dict[str, object], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Exit 2, one paragraph naming the fault, why and the fix, nothing started."""
    (tmp_path / "t.yml").write_text(json.dumps(
        {"name": "t", "switches": 3, "agents": 2, "workload": SHORT, "faults": [fault],
         "settings": {"machines": 4}}))
    said = refused(["run", "room", "-t", str(tmp_path / "t.yml")], {"{tmp}": str(tmp_path)},
                   monkeypatch)
    kind = "churn" if "churn" in fault else "machines-restart"
    assert (f"faults.0 ({kind}) starts room machines again, which a workload cannot "
            "follow") in said, said
    assert "Kill the machines for good (drop restart_after), fault a switch" in said


def test_each_machine_runs_its_share_of_the_plan_with_the_workload_s_sizes() -> None:
    room = RoomSettings(connections=4, arrivals="poisson")
    workload = topology().workload
    assert workload is not None
    plan = plan_workload(workload, ["agent1", "agent2"], room.arrivals, 2)
    argv = workload_argv(plan, room, workload, "http://s:8080", 100.0)
    assert argv["agent1"][:8] == ["vnetbench-room", "open", "100.000", "60", "keep", "4",
                                  "http://s:8080", "4096,20480,2097152"]
    assert decode(argv["agent2"][8]) == plan.schedules["agent2"]


def test_a_machine_the_plan_asks_nothing_of_runs_no_generator() -> None:
    slow = {"phases": [{"name": "a", "seconds": 10,
                        "mix": [{"name": "x", "size": 1, "rate": 0.05}]}]}
    workload = topology(slow).workload
    assert workload is not None
    plan = plan_workload(workload, ["agent1", "agent2"], "even", 1)
    assert set(workload_argv(plan, RoomSettings(), workload, "u", 1.0)) == {"agent1"}


def test_the_settings_name_the_workload_in_place_of_the_rate() -> None:
    chosen = ROOM.settings(topology())
    assert chosen["room_workload"] == "contest"
    assert chosen["seconds"] == 480
    assert chosen["room_sizes"] == "4096,20480,2097152"
    assert "room_rate" not in chosen
    assert chosen["room_timeout_s"] == 60  # the workload's, in place of room_timeout_s
    unbounded = {"phases": [{"name": "a", "seconds": 10, "at_once": [{"name": "b", "size": 1}]}]}
    assert ROOM.settings(topology(unbounded, room={"timeout_s": 5}))["room_timeout_s"] == 5
    assert load_seconds(topology()) == 480
    plain = topology(None, seconds=7)
    assert ROOM.settings(plain)["room_rate"] == 5 and load_seconds(plain) == 7


def test_requests_are_grouped_per_machine_in_their_order() -> None:
    requests = [Request("agent1", 1.0, 2.0), Request("agent2", 1.5, 1.0),
                Request("agent1", 0.5, None, "timeout")]
    grouped = by_machine(requests)
    assert grouped == {"agent1": [requests[0], requests[2]], "agent2": [requests[1]]}


FIGURES = WorkloadFigures(
    (PhaseFigures("steady", 10, 8, 2, 1, 0, 3.0, 9.0, 12.0),),
    (EventFigures("statement", "statement", 4, 3, 1500.0, 900.0, 1),),
    {"agent9": "1 records for 3 planned requests: not matched to the plan"})


def test_each_phase_and_event_is_a_series_of_declared_metrics() -> None:
    metrics = workload_metrics(FIGURES)
    assert metrics["room_phase_p99_ms_steady"] == (9.0, "ms")
    assert metrics["room_phase_failed_steady"] == (2, "count")
    assert metrics["room_burst_last_ms_statement"] == (1500.0, "ms")
    assert metrics["room_burst_unfinished_statement"] == (1, "count")
    for name in metrics:
        declared = DECLARATION.metric(name)
        assert declared.dimensions in ((PHASE,), (EVENT,)), name
    assert len(metrics) == 8 + 3


def test_the_notes_name_machines_left_out_and_events_unfinished() -> None:
    notes = workload_notes(FIGURES)
    assert notes[0].startswith("1 machine(s) left out of the phases' figures (agent9: 1 "
                               "records")
    assert notes[1] == ("at-once event statement: 1 of 4 machines never had the object (its "
                        "time is the last of those that did)")


def test_the_generators_records_read_back_into_figures_per_phase_and_event() -> None:
    """The glue a pass runs: each machine's `vnetbench-room open` line (columns in its
    schedule's order), read as requests, grouped, matched to the plan by position."""
    workload = topology({"phases": [
        {"name": "start", "seconds": 4, "at_once": [{"name": "doc", "size": "2MiB"}],
         "mix": [{"name": "poll", "size": 200, "rate": 1}]},
        {"name": "rush", "seconds": 2, "mix": [{"name": "poll", "size": 200, "rate": 2}]}],
    }).workload
    assert workload is not None
    machines = ["agent1", "agent2"]
    plan = plan_workload(workload, machines, "even", 1)
    requests = []
    for machine in machines:
        due = list(plan.schedules[machine].offsets_us)
        # the doc takes 3 s on agent2, 1 s on agent1; every poll 5 ms; agent2's last fails
        took = [3_000_000 if p.at_once and machine == "agent2" else
                1_000_000 if p.at_once else 5_000 for p in plan.parts[machine]]
        done: list[int | None] = [d + t for d, t in zip(due, took, strict=True)]
        error: list[str | None] = [None] * len(due)
        if machine == "agent2":
            done[-1], error[-1] = None, "read"
        record = {"loop": "open", "planned": 1000.0, "began": 1000.0, "ended": 1010.0,
                  "columns": {"scheduled_us": due, "sent_us": due, "done_us": done,
                              "error": error, "lag_us": [0] * len(due),
                              "waited": [False] * len(due), "bytes": [0] * len(due)}}
        requests += requests_of(machine, "vnetbench-room " + json.dumps(record))
    figures = workload_figures(plan, by_machine(requests))
    start, rush = figures.phases
    assert (start.planned, start.answered, start.failed, start.p99_ms) == (8, 8, 0, 5.0)
    assert (rush.planned, rush.answered, rush.failed) == (8, 7, 1)
    (doc,) = figures.events
    assert (doc.machines, doc.done, doc.last_ms, doc.unfinished) == (2, 2, 3000.0, 0)
    assert figures.unattributed == {}


HTTPS = {"phases": [
    {"name": "start", "seconds": 4, "at_once": [{"name": "doc", "size": "2MiB",
                                                 "scheme": "https"}],
     "mix": [{"name": "poll", "size": 200, "rate": 1, "scheme": "https"}]},
    {"name": "rush", "seconds": 2, "mix": [{"name": "submit", "upload": "4KiB", "rate": 2}]}]}


def test_a_workload_over_https_gives_the_generator_both_urls_and_its_targets() -> None:
    workload = topology(HTTPS).workload
    assert workload is not None
    plan = plan_workload(workload, ["agent1"], "even", 1)
    argv = workload_argv(plan, RoomSettings(), workload, "http://s:8080", 1.0,
                         "https://s:8443")
    assert argv["agent1"][6:8] == ["http://s:8080,https://s:8443", "s200,s2097152,u4096"]
    assert plan.sizes == (200, 2 * 2**20)  # the server's files: no upload's
    plain = topology().workload
    assert plain is not None
    plan = plan_workload(plain, ["agent1"], "even", 1)
    assert workload_argv(plan, RoomSettings(), plain, "http://s:8080", 1.0,
                         "https://s:8443")["agent1"][6] == "http://s:8080"
    assert ROOM.settings(topology(HTTPS))["room_sizes"] == "s200,s2097152,u4096"


def record_line(due: list[int], handshake: list[str | None] | None) -> str:
    columns: dict[str, Any] = {
        "scheduled_us": due, "sent_us": due, "done_us": [d + 5_000 for d in due],
        "error": [None] * len(due), "lag_us": [0] * len(due), "waited": [False] * len(due),
        "bytes": [0] * len(due)}
    if handshake is not None:
        columns |= {"handshake": handshake,
                    "connect_us": [None if h is None else 3_000 if h == "full" else 1_000
                                   for h in handshake]}
    return "vnetbench-room " + json.dumps({"loop": "open", "planned": 1000.0, "began": 1000.0,
                                           "ended": 1010.0, "columns": columns})


def test_each_phase_and_event_over_https_counts_its_full_and_resumed_handshakes() -> None:
    """Each machine's first connection a full handshake, its later ones resumed; the
    counts per phase's mix and per at-once event, and opening's p99; a plain
    workload's figures have no such series (their meaning unchanged)."""
    workload = topology(HTTPS).workload
    assert workload is not None
    machines = ["agent1", "agent2"]
    plan = plan_workload(workload, machines, "even", 1)
    requests = []
    for machine in machines:
        parts = plan.parts[machine]
        tls = [n for n, p in enumerate(parts) if p.phase == "start"]
        handshake: list[str | None] = [None] * len(parts)
        handshake[tls[0]] = "full"
        handshake[tls[-1]] = "resumed"
        requests += requests_of(machine, record_line(list(plan.schedules[machine].offsets_us),
                                                     handshake))
    figures = workload_figures(plan, by_machine(requests))
    start, rush = figures.phases
    (doc,) = figures.events
    # the event is first at the phase's instant: each machine's full handshake is its
    assert doc.tls is not None and (doc.tls.full, doc.tls.resumed) == (2, 0)
    assert start.tls is not None and (start.tls.full, start.tls.resumed) == (0, 2)
    assert start.tls.connect_p99_ms == 1.0 and doc.tls.connect_p99_ms == 3.0
    assert rush.tls is not None and (rush.tls.full, rush.tls.resumed) == (0, 0)
    metrics = workload_metrics(figures)
    assert metrics["room_phase_tls_resumed_start"] == (2, "count")
    assert metrics["room_burst_tls_full_doc"] == (2, "count")
    assert metrics["room_burst_tls_connect_p99_ms_doc"] == (3.0, "ms")
    assert len(metrics) == 2 * (8 + 3) + (3 + 3)  # two phases, one event
    plain = topology().workload
    assert plain is not None
    plan = plan_workload(plain, ["agent1"], "even", 1)
    figures = workload_figures(plan, by_machine(requests_of("agent1", record_line(
        list(plan.schedules["agent1"].offsets_us), None))))
    assert not [name for name in workload_metrics(figures) if "_tls_" in name]
