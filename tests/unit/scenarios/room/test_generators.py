"""A switch's machines share one generator (scenarios/room/generators.py): grouped by
host and switch, each machine's command carried whole after its @MACHINE:PID, the
arguments kept under Linux's limit, and each machine's record split back out of the
shared log in the form a machine's own probe printed."""

from __future__ import annotations

import pytest

from vnetbench.engines.base import ContainerRecord
from vnetbench.scenarios.room import generators as shared
from vnetbench.scenarios.room.generators import (
    Group,
    generator_prefix,
    generators,
    groups_of,
    is_open_loop,
    machine_text,
    pids_of,
    split_command,
)


def open_command(schedule: str, gate: bool = False) -> list[str]:
    return ["timeout", "-k", "2", "60", "vnetbench-room",
            *(["--gate", "/run/vnetbench-room-gate/start"] if gate else []),
            "open", "100.000", "2", "keep", "6", "http://10.0.0.9:8080", "200", schedule,
            "160.000"]


def test_machines_group_by_host_and_switch_in_order_and_at_most_a_cap(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shared, "MACHINES_PER_GENERATOR", 2)
    machines = ["a1", "b1", "a2", "a3", "c1"]
    switch = {"a1": "s1", "a2": "s1", "a3": "s1", "b1": "s2", "c1": "s1"}
    host = {"c1": "node2"}  # c1: the same switch, another host
    assert groups_of(machines, switch, host) == [
        Group("", "s1", ("a1", "a2")), Group("", "s1", ("a3",)),
        Group("", "s2", ("b1",)), Group("node2", "s1", ("c1",))]


def test_a_generator_carries_every_machines_arguments_after_its_pid() -> None:
    argv = {"m1": open_command("0.0", gate=True), "m2": open_command("a.1", gate=True)}
    made = generators("p-room-1", [Group("", "s1", ("m1", "m2"))], argv,
                      {"m1": 11, "m2": 22}, {"m1": "p-m1", "m2": "p-m2"})
    assert len(made) == 1
    generator = made[0]
    assert generator.name == "p-room-1-generator-1" and generator.beside == "p-m1"
    assert generator.machines == ("m1", "m2")
    assert list(generator.argv) == [
        "timeout", "-k", "2", "60", "vnetbench-room", "--gate", "/run/vnetbench-room-gate/start",
        "many", "@m1:11", *open_command("0.0")[6:], "@m2:22", *open_command("a.1")[6:]]


def test_a_machine_without_a_process_or_a_command_is_left_out() -> None:
    argv = {"m1": open_command("0.0"), "m2": open_command("0.0")}
    made = generators("p", [Group("", "s", ("m1", "m2", "m3"))], argv, {"m1": 5, "m3": 7},
                      {"m1": "c1", "m2": "c2", "m3": "c3"})
    assert [g.machines for g in made] == [("m1",)]


def test_arguments_past_the_budget_start_another_generator(
        monkeypatch: pytest.MonkeyPatch) -> None:
    one = sum(len(word) + 1 for word in ["@m0:1", *open_command("x" * 400)[6:]])
    monkeypatch.setattr(shared, "ARGV_BUDGET_BYTES", 2 * one + 10)
    machines = [f"m{i}" for i in range(5)]
    made = generators("p", [Group("", "s", tuple(machines))],
                      {m: open_command("x" * 400) for m in machines},
                      dict.fromkeys(machines, 1), {m: f"c-{m}" for m in machines})
    assert [g.machines for g in made] == [("m0", "m1"), ("m2", "m3"), ("m4",)]
    assert [g.name for g in made] == ["p-generator-1", "p-generator-2", "p-generator-3"]
    assert [g.beside for g in made] == ["c-m0", "c-m2", "c-m4"]


def test_only_the_open_loop_shares_a_generator() -> None:
    assert is_open_loop(open_command("0.0")) and is_open_loop(open_command("0.0", gate=True))
    closed = ["timeout", "-k", "2", "9", "vnetbench-room", "client", "1.0", "5", "5"]
    assert not is_open_loop(closed)
    with pytest.raises(ValueError, match="not an open loop"):
        split_command(closed)


def test_each_machine_gets_its_own_record_in_its_own_probes_form() -> None:
    log = ("vnetbench-room@m1 {\"a\":1}\n"
           "vnetbench-room@m10 {\"a\":10}\n"
           "a warning of the whole generator\n")
    assert machine_text(log, "m1") == ("vnetbench-room {\"a\":1}\n"
                                       "a warning of the whole generator\n")
    assert machine_text(log, "m10") == ("vnetbench-room {\"a\":10}\n"
                                        "a warning of the whole generator\n")
    assert machine_text(log, "m2") == "a warning of the whole generator\n"
    own = "vnetbench-room {\"b\":2}\n"  # a machine's own probe: as it is
    assert machine_text(own, "m1") == own
    crashed = "Traceback (most recent call last):\nOSError: boom\n"
    assert machine_text(crashed, "m1") == crashed


def record(name: str, pid: int | None, running: bool = True) -> ContainerRecord:
    return ContainerRecord(name, name, {}, {}, running, False, 0, None, None, pid=pid)


def test_a_machine_s_pid_is_its_running_containers() -> None:
    records = [record("c1", 10), record("c2", None), record("c3", 30, running=False),
               record("other", 40)]
    assert pids_of(records, {"c1": "m1", "c2": "m2", "c3": "m3"}) == {"m1": 10}


def test_a_room_started_again_names_its_generators_as_the_first_start_did() -> None:
    """The engine too slow for the lead: the probes are removed and the room started
    again (runtime.py start_room), `names` then holding the first start's generators."""
    assert generator_prefix("run-room-1-agent1", "agent1") == "run-room-1"
    assert generator_prefix("run-room-1-generator-2", "agent1") == "run-room-1"
