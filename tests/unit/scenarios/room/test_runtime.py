"""room's stack, schedule and pass result (no engine; records are real output)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace

import pytest

from vnetbench.core.outcome import State
from vnetbench.declared.room import RoomSettings
from vnetbench.errors import UserError
from vnetbench.measure.room import MachineLoad, RoomFigures, parse_machine
from vnetbench.model.topology import parse_topology
from vnetbench.overlays.baseline import Baseline
from vnetbench.scenarios import get_scenario
from vnetbench.scenarios.resources import MemoryFigures
from vnetbench.scenarios.room.open_loop import decode, room_schedules
from vnetbench.scenarios.room.runtime import (
    SERVER,
    Load,
    closed_argv,
    lead_per_machine_s,
    open_argv,
    phases,
    probe_starts,
    result_of,
)

DATA = Path(__file__).resolve().parents[3] / "data" / "room"
ROOM = get_scenario("room")


def topology(faults: list[object] | None = None, **settings: object) -> object:
    return parse_topology({"name": "t", "switches": 3, "agents": 2, "settings": settings,
                           "faults": faults or []}, "t")


def load(**changes: object) -> Load:
    fields: dict[str, object] = dict(
        loads={}, without_record={}, cpu={"agent": 12.0}, memory=MemoryFigures({}, {}),
        server_cpu=3.0, host_percent=40.0, planned=0.0, lead_s=5.0, starting_s=2.0)
    return Load(**(fields | changes))  # type: ignore[arg-type]


def test_the_room_sits_on_every_switch_but_the_last_and_the_server_on_the_last() -> None:
    room = ROOM.stack_topology(topology(machines=5), Baseline())
    placed = {a.name: a.switch for a in room.agents}
    assert placed.pop(SERVER) == "switch3"
    assert sorted(placed) == [f"agent{n}" for n in range(1, 6)]
    assert set(placed.values()) == {"switch1", "switch2"}
    assert room.measure is None  # the user's pair names agents the room lacks


def test_a_room_larger_than_its_switches_hold_is_refused_before_anything_starts() -> None:
    with pytest.raises(UserError, match=r"room scenario cannot run.*fewer machines"):
        ROOM.check(parse_topology({"name": "t", "switches": 2, "agents": 2,
                                   "settings": {"machines": 5000}}, "t"))


def test_first_requests_are_spread_over_one_pause() -> None:
    spread = phases(["a", "b", "c", "d"], rate=5)  # a pause of 200 ms
    assert list(spread.values()) == pytest.approx([0.0, 0.05, 0.1, 0.15])
    assert set(phases(["a", "b"], rate=0).values()) == {0.0}  # no pause: all at once


def test_a_room_that_answered_is_ok_with_its_figures() -> None:
    keep = parse_machine((DATA / "client-keep.txt").read_text())
    room = RoomFigures.of({"agent1": keep}, {})
    result = result_of(room, load(loads={"agent1": keep}), 2)
    assert result.state is State.OK
    assert result.metrics["room_p99_ms"][0] == pytest.approx(0.464)
    assert result.metrics["room_cpu_agent_percent"] == (12.0, "% of a core")
    assert result.metrics["room_latency_q50_ms"][0] == result.metrics["room_p50_ms"][0]


def test_machines_without_a_record_or_started_late_make_the_pass_partial() -> None:
    keep = parse_machine((DATA / "client-keep.txt").read_text())
    late = parse_machine((DATA / "client-refused.txt").read_text().replace(
        '"error": "unable to connect to 172.17.0.2:8081 Connection refused", ', ""))
    room = RoomFigures.of({"agent1": keep, "agent2": late}, {"agent3": "no record"})
    result = result_of(room, load(loads={"agent1": keep, "agent2": late}), 2)
    assert result.state is State.PARTIAL
    assert "1 of 3 machines gave no record (agent3: no record)" in result.status
    assert "began late on 1 machine(s), up to 2.3 s" in result.status


def test_a_room_of_which_nothing_was_answered_is_dead() -> None:
    refused = parse_machine((DATA / "client-refused.txt").read_text())
    room = RoomFigures.of({}, {"agent1": refused.error or ""})
    result = result_of(room, load(), 2)
    assert result.state is State.FAILED
    assert "Connection refused" in result.status


def test_a_room_whose_every_wrk_stalled_is_dead_and_says_so() -> None:
    stalled = parse_machine((DATA / "client-stalled.txt").read_text())
    room = RoomFigures.of({"agent1": stalled, "agent2": stalled}, {})
    result = result_of(room, load(loads={"agent1": stalled, "agent2": stalled}), 2)
    assert result.state is State.DEAD
    assert result.status.startswith("no request of 2 machines was answered: wrk did not end")


def test_a_refused_machine_is_said_with_its_last_three_log_lines() -> None:
    """The context's agents' last lines (three: a program's error comes a line before its
    wrapper's), joined; a machine with no log says so."""
    from types import SimpleNamespace

    from vnetbench.scenarios.room import Room

    asked: list[tuple[int, tuple[str, ...]]] = []

    def last_log_lines(count: int, roles: tuple[str, ...]) -> dict[str, list[str]]:
        asked.append((count, roles))
        return {"agent4": ["too many open files", "wrapper: exit 1", "stopped"]}

    said = Room.with_last_lines(SimpleNamespace(last_log_lines=last_log_lines),  # type: ignore[arg-type]
                                {"agent4": "not running", "agent5": "gone"})
    assert asked == [(3, ("agent",))]
    assert said == {
        "agent4": "its probe could not start (not running); its log ends: too many open "
                  "files | wrapper: exit 1 | stopped",
        "agent5": "its probe could not start (gone); its log ends: no log"}
    assert Room.with_last_lines(SimpleNamespace(), {}) == {}  # type: ignore[arg-type]


def open_load(**changes: object) -> MachineLoad:
    """The open loop's real record (a paused test server), its columns changed."""
    line = (DATA / "open-paused.txt").read_text().splitlines()[-1]
    data = json.loads(line.removeprefix("vnetbench-room "))
    data["columns"] |= changes
    return parse_machine("vnetbench-room " + json.dumps(data))


def test_an_open_loop_pass_reports_what_it_planned_sent_and_cost() -> None:
    steady = open_load(scheduled_us=[k * 200_000 for k in range(20)],
                       done_us=[k * 200_000 + 900 for k in range(20)])
    room = RoomFigures.of({"agent1": steady, "agent2": steady}, {})
    result = result_of(room, load(loads={"agent1": steady, "agent2": steady}), 4)
    assert result.state is State.OK
    metrics = result.metrics
    assert metrics["room_planned"][0] == 40 and metrics["room_sent"][0] == 40
    assert metrics["room_sent_percent"] == (100.0, "%")
    assert metrics["room_behind_max_ms"][0] == pytest.approx(3.176)
    assert metrics["room_generator_mib"][0] == pytest.approx(32.35, abs=0.01)
    assert metrics["room_p50_ms"][0] == pytest.approx(0.9)  # from the schedule


def test_a_generator_behind_or_a_room_sending_too_little_is_partial_and_says_why() -> None:
    behind = open_load(lag_us=[3200] * 20)  # a 3.2 ms lag against a 25 ms gap
    unsent = open_load(scheduled_us=[k * 200_000 for k in range(20)],
                       sent_us=[None] * 5 + [1] * 15, done_us=[None] * 5 + [2] * 15,
                       error=["timeout"] * 5 + [None] * 15)
    room = RoomFigures.of({"agent1": behind, "agent2": unsent}, {})
    result = result_of(room, load(loads={"agent1": behind, "agent2": unsent}), 4)
    assert result.state is State.PARTIAL
    assert ("the generator fell behind its schedule on 1 of 2 machines (agent1: its own "
            "lag p90 3.2 ms, over 10% of its 25 ms gap" in result.status)
    assert "the room sent 35 of 40 planned requests (87.5 %, under 98%)" in result.status


def test_the_closed_loop_keeps_wrks_command_line() -> None:
    room = RoomSettings(loop="closed", rate=5, sizes=(200, 2048))
    argv, last_s = closed_argv(["agent1", "agent2"], room, 3, "http://s:8080", 100.0)
    assert argv["agent2"] == ["vnetbench-room", "client", "100.100", "3", "5", "keep", "2",
                              "http://s:8080", "200", "2048"]
    assert last_s == pytest.approx(3.1)


def test_the_open_loop_hands_each_machine_its_schedule() -> None:
    room = RoomSettings(rate=5, sizes=(200, 2048), arrivals="poisson", connections=4)
    argv, last_s = open_argv(["agent1", "agent2"], room, 3, "http://s:8080", 100.0, 2)
    head = ["vnetbench-room", "open", "100.000", "2", "keep", "4", "http://s:8080",
            "200,2048"]
    assert argv["agent1"][:8] == head
    schedules = room_schedules(["agent1", "agent2"], 5, 3, 2, "poisson", 2)
    assert decode(argv["agent2"][8]) == schedules["agent2"]
    assert last_s == max(s.last_s for s in schedules.values()) and last_s < 3


def test_each_open_loop_generator_holds_until_the_rooms_last_deadline() -> None:
    """The generators stay until the room's last request's deadline (the instant, the
    last request, its timeout), so no machine's exit lands on another's requests; wrk's
    closed loop keeps its command line."""
    names = {"agent1": "probe-1", "agent2": "probe-2"}
    opened = topology(seconds=3, room={"timeout_s": 4})
    load = ROOM.load_argv(SimpleNamespace(topology=opened), names,  # type: ignore[attr-defined]
                          "http://s:8080", 1, None, None, 100.0, 5.0)
    assert {tool[-1] for tool in load.argv.values()} == {f"{100.0 + load.last_s + 4:.3f}"}
    assert all(tool[4:6] == ["vnetbench-room", "open"] for tool in load.argv.values())
    closed = topology(seconds=3, room={"loop": "closed"})
    load = ROOM.load_argv(SimpleNamespace(topology=closed), names,  # type: ignore[attr-defined]
                          "http://s:8080", 1, None, None, 100.0, 5.0)
    assert all(tool[-1] == "65536" for tool in load.argv.values())  # its last size
    # with the room's end, each is also told the barrier's URL after its deadline
    load = ROOM.load_argv(SimpleNamespace(topology=opened), names,  # type: ignore[attr-defined]
                          "http://s:8080", 1, None, None, 100.0, 5.0, "http://s:8081")
    assert {tuple(tool[-2:]) for tool in load.argv.values()} == {
        (f"{100.0 + load.last_s + 4:.3f}", "http://s:8081")}


def test_an_open_loop_that_cannot_be_planned_is_refused_before_anything_starts() -> None:
    with pytest.raises(UserError, match="MAX_ARG_STRLEN"):
        ROOM.check(topology(seconds=3600, room={"rate": 10}))
    ROOM.check(topology(seconds=3600, room={"rate": 10, "loop": "closed"}))
    with pytest.raises(UserError, match=r"rate 0.*is a closed loop"):
        topology(room={"rate": 0})
    topology(room={"rate": 0, "loop": "closed"})


def test_the_settings_name_the_loop_and_the_open_loops_own() -> None:
    assert ROOM.settings(topology())["room_loop"] == "open"
    assert ROOM.settings(topology())["room_connections"] == 6
    closed = ROOM.settings(topology(room={"loop": "closed"}))
    assert "room_arrivals" not in closed and closed["room_connection"] == "keep"


def test_requests_a_fault_held_unsent_do_not_make_the_pass_partial() -> None:
    unsent = open_load(scheduled_us=[k * 200_000 for k in range(20)],
                       sent_us=[None] * 5 + [1] * 15, done_us=[None] * 5 + [2] * 15,
                       error=["timeout"] * 5 + [None] * 15)
    room = RoomFigures.of({"agent1": unsent}, {})
    result = result_of(room, load(loads={"agent1": unsent}), 4, excused=5)
    assert result.state is State.OK
    assert result.notes[0].startswith("5 request(s) were never sent: due once the faults")
    # the generator's own shortfall beyond them still is
    assert result_of(room, load(loads={"agent1": unsent}), 4, excused=4).state is \
        State.PARTIAL


def test_a_machine_s_generator_asks_only_while_it_is_up() -> None:
    room = RoomSettings(rate=5, sizes=(200,))
    argv, last_s = open_argv(["agent1", "agent2"], room, 4, "http://s:8080", 100.0, 1,
                             {"agent1": (0.0, 1.5)})
    schedules = room_schedules(["agent1", "agent2"], 5, 4, 1, "even", 1)
    assert decode(argv["agent1"][8]).offsets_us == tuple(
        o for o in schedules["agent1"].offsets_us if o < 1_500_000)
    assert decode(argv["agent2"][8]) == schedules["agent2"]
    assert last_s == max(s.last_s for s in schedules.values())
    # started again: its requests from then on, at their places in the whole room's
    later, _ = open_argv(["agent2"], room, 4, "http://s:8080", 100.0, 1,
                         {"agent2": (2.0, math.inf)}, ["agent1", "agent2"])
    assert decode(later["agent2"][8]).offsets_us == tuple(
        o for o in schedules["agent2"].offsets_us if o >= 2_000_000)
    assert open_argv(["agent1"], room, 4, "u", 100.0, 1, {"agent1": (5.0, 6.0)})[0] == {}


def test_a_room_under_faults_is_checked_before_anything_starts() -> None:
    flap = {"at": "2s", "flap": "backbone", "times": 2, "down": "1s", "up": "1s"}
    ROOM.check(topology(seconds=10, machines=4, faults=[flap]))
    with pytest.raises(UserError, match="needs the open loop"):
        ROOM.check(topology(seconds=10, machines=4, room={"loop": "closed"}, faults=[flap]))
    with pytest.raises(UserError, match=r"last step comes 5 s after .* lasts 4 s"):
        ROOM.check(topology(seconds=4, machines=4, faults=[flap]))
    with pytest.raises(UserError, match="5 machines, and the room has 4"):
        topology(seconds=10, machines=4, faults=[{"at": "1s", "kill": {"machines": 5}}])


def test_the_lead_per_machine_follows_the_engines_measured_pace() -> None:
    # a quick engine (one probe started in 0.2 s): the floor, 0.3 s a machine
    assert lead_per_machine_s(0.2) == pytest.approx(0.3)
    # a busy one (1.2 s alone, four at a time): twice its share, 0.6 s a machine
    assert lead_per_machine_s(1.2) == pytest.approx(0.6)


def test_the_lead_counts_the_open_loop_s_generators_not_its_machines() -> None:
    """The engine starts a generator per switch's 100 machines (generators.py), so the
    room's lead is sized for those starts; the closed loop still starts one a machine."""
    room = ROOM.stack_topology(topology(machines=250), Baseline())
    names = {a.name: f"p-{a.name}" for a in room.agents if a.name != SERVER}
    assert probe_starts(room, names) == 4  # 125 a switch on two switches: 2 + 2
    closed = room.model_copy(update={"settings": room.settings.model_copy(
        update={"room": RoomSettings(loop="closed")})})
    assert probe_starts(closed, names) == 250
