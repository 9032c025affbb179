"""The Docker engine's output read into the interface's own values: `docker events`
lines (recorded on this project's machine: a 20-agent bring-up and teardown) into
EngineEvents, `docker container inspect` records into ContainerRecords."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path

from vnetbench.engines.base import ContainerRecord, EngineEvent
from vnetbench.engines.docker import DockerEvents, container_record, docker_event

EVENTS = Path(__file__).resolve().parents[2] / "data" / "engine-events" / \
    "compose-up-down-20-agents.jsonl"
PROJECT = "perf20-20261201-121159-33de"


def recorded_lines() -> list[str]:
    return EVENTS.read_text().splitlines()


def test_every_recorded_line_is_an_event_of_a_container_or_a_network() -> None:
    events = [docker_event(line) for line in recorded_lines()]
    assert None not in events and len(events) == len(recorded_lines()) == 104
    assert {e.kind for e in events if e is not None} == {"container", "network"}


def test_a_start_names_its_container_its_labels_and_its_time() -> None:
    line = next(line for line in recorded_lines()
                if '"Action":"start"' in line and f"{PROJECT}-fabric" in line)
    event = docker_event(line)
    assert event is not None
    assert (event.kind, event.action, event.detail) == ("container", "start", "")
    assert event.name == f"{PROJECT}-fabric"
    assert event.labels["vnetbench.role"] == "fabric"
    assert event.labels["vnetbench.run"] == PROJECT
    assert event.time == json.loads(line)["timeNano"] / 1e9


def test_an_action_s_detail_is_split_off() -> None:
    found = [e for line in recorded_lines() if (e := docker_event(line)) is not None]
    health = {e.detail for e in found if e.action == "health_status"}
    checks = {e.detail for e in found if e.action == "exec_create"}
    assert health == {"healthy"}
    assert checks == {"test -f /run/vnetbench-ready"}


def test_other_kinds_and_garbage_are_no_event() -> None:
    assert docker_event("not json") is None
    assert docker_event("[]") is None
    assert docker_event('{"Type": "image", "Action": "pull"}') is None
    seconds = docker_event('{"Type": "network", "Action": "create", "time": 1796127119,'
                           ' "Actor": {"Attributes": {"name": "n"}}}')
    assert seconds == EngineEvent(1796127119.0, "network", "create", "", "n", {"name": "n"})


def test_a_watch_yields_each_event_of_its_process_and_closes_it() -> None:
    watch = DockerEvents.__new__(DockerEvents)  # its process: the recorded lines, not docker
    watch.process = subprocess.Popen(["cat", str(EVENTS)], stdout=subprocess.PIPE, text=True)
    events = list(watch)
    watch.close()
    assert len(events) == 104 and all(isinstance(e, EngineEvent) for e in events)
    assert watch.process.returncode is not None


# Written by hand with the keys and the forms of `docker container inspect` (Docker
# Engine 26): no inspection is recorded in tests/data (the integration test
# test_engine_calls.py reads a real one).
INSPECTED = {
    "Id": "7cd4588ef5cbe21907fcf5bc1523ddf8a35966ebf684dc68e39f171aa0015964",
    "Name": f"/{PROJECT}-agent1",
    "State": {"Status": "running", "Running": True, "Paused": False, "ExitCode": 0,
              "Pid": 9676, "StartedAt": "2026-12-01T12:12:01.431547798Z",
              "FinishedAt": "0001-01-01T00:00:00Z"},
    "Config": {"Labels": {"vnetbench.role": "agent", "vnetbench.node": "agent1"},
               "Healthcheck": {"Test": ["CMD", "test", "-f", "/run/vnetbench-ready"],
                               "StartPeriod": 5000000000}},
    "NetworkSettings": {"Networks": {
        f"{PROJECT}_site1": {"IPAddress": "10.160.1.2", "Gateway": "10.160.1.1"},
        "unaddressed": {"IPAddress": ""}}},
}


def test_an_inspection_is_the_interface_s_record() -> None:
    record = container_record(INSPECTED)
    assert record == ContainerRecord(
        id=INSPECTED["Id"], name=f"{PROJECT}-agent1",
        labels={"vnetbench.role": "agent", "vnetbench.node": "agent1"},
        addresses={f"{PROJECT}_site1": "10.160.1.2"}, running=True, paused=False,
        exit_code=0, started=datetime(2026, 12, 1, 12, 12, 1, 431547, tzinfo=UTC),
        finished=None, start_period_s=5.0, pid=9676)


def test_an_ended_container_without_a_health_check() -> None:
    ended = {**INSPECTED, "Config": {"Labels": None},
             "State": {"Running": False, "Paused": False, "ExitCode": 137,
                       "StartedAt": "2026-12-01T12:12:01Z",
                       "FinishedAt": "2026-12-01T12:13:00.5Z"}}
    record = container_record(ended)
    assert (record.running, record.exit_code, record.labels, record.start_period_s,
            record.pid) == (False, 137, {}, 0.0, None)
    assert record.finished == datetime(2026, 12, 1, 12, 13, 0, 500000, tzinfo=UTC)


def test_every_host_s_starts_come_through_one_stream_until_it_is_closed() -> None:
    """A swarm's restarts on any node reach the shaping keeper: its engine watches
    every host's events (one stream each, merged), and closing the merged stream
    closes each."""
    import threading

    from vnetbench.engines.docker import MergedEvents

    class Host:
        def __init__(self, names: list[str]) -> None:
            self.names, self.closed = names, threading.Event()

        def __iter__(self):  # type: ignore[no-untyped-def]
            for name in self.names:
                yield EngineEvent(0.0, "container", "start", "", name)
            self.closed.wait(10)  # a live stream: nothing more until closed

        def close(self) -> None:
            self.closed.set()

    hosts = [Host(["router-switch1", "agent1"]), Host(["router-switch2"])]
    merged = MergedEvents(hosts)
    seen = []
    for event in merged:
        seen.append(event.name)
        if len(seen) == 3:
            merged.close()
    assert sorted(seen) == ["agent1", "router-switch1", "router-switch2"]
    assert all(host.closed.is_set() for host in hosts)
