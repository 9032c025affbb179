"""The engine's events of a bring-up and teardown read into a breakdown: lines
recorded from `docker events --format '{{json .}}'` on this project's machine
(20 agents: the project's networks, five of its containers, and lines of other
projects' containers that must be left out)."""

from __future__ import annotations

from pathlib import Path

from vnetbench.engines.base import EngineEvent
from vnetbench.engines.docker import docker_event
from vnetbench.measure.engine_events import (
    BRING_UP_PHASES,
    breakdown,
    breakdown_lines,
    of_project,
)

DATA = Path(__file__).resolve().parents[2] / "data" / "engine-events"
PROJECT = "perf20-20261201-121159-33de"


def recorded() -> list[EngineEvent]:
    """The recorded lines as this machine's engine gives them (engines/docker.py)."""
    lines = (DATA / "compose-up-down-20-agents.jsonl").read_text().splitlines()
    return [event for line in lines if (event := docker_event(line)) is not None]


def events() -> list[EngineEvent]:
    return of_project(recorded(), PROJECT)


def test_only_the_project_s_containers_and_networks_are_kept_in_time_order() -> None:
    found = events()
    assert found and all(e.name.startswith(PROJECT) for e in found)
    assert [e.time for e in found] == sorted(e.time for e in found)
    assert {e.kind for e in found} == {"container", "network"}
    health = [e for e in found if e.action == "health_status"]
    assert health and {e.detail for e in health} == {"healthy"}
    assert {e.name for e in found if e.action == "create" and e.kind == "container"} == {
        f"{PROJECT}-{s}" for s in ("fabric", "router-switch1", "router-switch2",
                                   "agent1", "agent2")}


def test_other_projects_and_other_kinds_are_left_out() -> None:
    assert {e.name for e in recorded()} - {e.name for e in events()}  # there are others
    mine = EngineEvent(2.0, "container", "start", "", "x-agent1")
    assert of_project([EngineEvent(3.0, "volume", "create", "", "x-data"), mine,
                       EngineEvent(1.0, "container", "start", "", "y-agent1")], "x") == [mine]


def steps_around(found: list) -> list[tuple[str, float, float]]:
    """vnetbench's steps placed around the recorded events: up until the last health
    check passed, the teardown from the first kill."""
    healthy = max(e.time for e in found if e.action == "health_status")
    first = min(e.time for e in found)
    kill = min(e.time for e in found if e.action == "kill")
    last = max(e.time for e in found)
    return [("render", first - 0.2, first - 0.1), ("up", first - 0.1, healthy + 0.1),
            ("shape", healthy + 0.1, healthy + 0.2), ("save logs", healthy + 0.2, kill),
            ("remove", kill, last + 0.1)]


def test_the_breakdown_counts_each_phase_inside_its_own_part() -> None:
    found = events()
    result = breakdown(found, steps_around(found))
    up = {row["phase"]: row for row in result["bring_up"]}
    down = {row["phase"]: row for row in result["teardown"]}
    assert up["containers created"]["count"] == 5
    assert up["health checks passed"]["count"] == 5
    assert up["networks created"]["count"] == 3
    assert down["containers removed"]["count"] == 5
    assert down["networks removed"]["count"] == 3
    for row in [*up.values(), *down.values()]:
        assert 0 <= row["first_s"] <= row["last_s"]
        assert abs(row["span_s"] - (row["last_s"] - row["first_s"])) <= 0.002
    # a container is created before it starts, and started before it is healthy
    assert up["containers created"]["first_s"] <= up["containers started"]["first_s"]
    assert up["containers started"]["last_s"] <= up["health checks passed"]["last_s"]
    assert [row["step"] for row in result["steps"]] == [
        "render", "up", "shape", "save logs", "remove"]


def test_without_steps_only_the_steps_are_there() -> None:
    assert breakdown(events(), []) == {"steps": []}


def test_the_lines_name_every_step_and_phase() -> None:
    found = events()
    lines = breakdown_lines(breakdown(found, steps_around(found)))
    assert lines[0].startswith("render ")
    assert any("containers created x5" in line for line in lines)
    assert len(BRING_UP_PHASES) == 6
