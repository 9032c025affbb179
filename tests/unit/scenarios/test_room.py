"""room's stack, schedule and pass result (no engine; records are real output)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vnetbench.errors import UserError
from vnetbench.measure.room import RoomFigures, parse_machine
from vnetbench.outcome import State
from vnetbench.overlays.baseline import Baseline
from vnetbench.scenarios import get_scenario
from vnetbench.scenarios.room import SERVER, Load, phases, result_of
from vnetbench.scenarios.throughput import MemoryFigures
from vnetbench.topology import parse_topology

DATA = Path(__file__).resolve().parents[2] / "data" / "room"
ROOM = get_scenario("room")


def topology(**settings: object) -> object:
    return parse_topology({"name": "t", "switches": 3, "agents": 2, "settings": settings}, "t")


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
