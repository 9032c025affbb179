"""A topology's faults as a schedule: every kind of entry read, each class of bad
entry refused with a sentence naming the entry and the fix (exit 2 through
UserError, before anything starts), today's entries unchanged."""

from __future__ import annotations

import re
from typing import Any

import pytest

from vnetbench.errors import UserError
from vnetbench.faults.schedule import expand
from vnetbench.model.faults.checks import churn_count, overlap_problems
from vnetbench.model.faults.declared import MachineCount
from vnetbench.model.topology import Fault, Topology, parse_topology

BASE: dict[str, Any] = {"name": "t", "switches": 3, "agents": 6,
                        "settings": {"machines": 20}}


def topology(*faults: dict[str, Any], **changes: Any) -> Topology:
    return parse_topology({**BASE, **changes, "faults": list(faults)}, "t.yml")


def refused(*faults: dict[str, Any], **changes: Any) -> str:
    with pytest.raises(UserError) as raised:
        topology(*faults, **changes)
    return str(raised.value)


EVERY_KIND = (
    {"at": "5s", "flap": "backbone", "times": 5, "down": "1s", "up": "1s"},
    {"at": "16s", "partition": [["switch1"], ["switch2", "switch3"]], "for": "3s"},
    {"at": "0s", "ramp": "loss", "from": "0%", "to": "20%", "over": "10s"},
    {"at": "11s", "ramp": "rate", "from": "100mbit", "to": "1mbit", "over": "2s",
     "step": "1s", "hold": "2s"},
    {"at": "5s", "churn": "20%", "over": "10s"},
    {"at": "1s", "kill": {"machines": 3}, "restart_after": "2s"},
    {"at": "1s", "kill": "server"},
    {"at": "2s", "kill": "switch2", "restart_after": "3s"},
)


def test_every_kind_of_event_is_read_and_reads_back_as_written() -> None:
    read = topology(*EVERY_KIND)
    assert [f.kind for f in read.faults] == [
        "backbone-flap", "partition", "loss-ramp", "rate-ramp", "churn", "machines-restart",
        "server-kill", "switch-restart"]
    assert [f.lasts_ms for f in read.faults] == [
        9000.0, 3000.0, 10500.0, 4000.0, 10000.0, 2000.0, None, 3000.0]
    assert read.faults[3].start == 100e6 and read.faults[3].end == 1e6
    assert read.faults[5].kill == MachineCount(machines=3)
    assert read.faults[0].describe() == "backbone flapping 5 times (down 1s, up 1s)"
    assert read.faults[2].describe() == "backbone loss from 0% to 20% over 10s, held 500ms"
    written = read.model_dump(mode="json", by_alias=True)
    assert written["faults"][3]["from"] == "100mbit"
    assert written["faults"][5]["kill"] == {"machines": 3}
    assert parse_topology(written, "t") == read
    assert parse_topology(read.model_dump(), "t") == read  # by field name (build_room's)


def test_the_command_line_s_form_of_n_machines_is_read() -> None:
    assert Fault.model_validate({"kill": "machines:4"}).kill == MachineCount(machines=4)


def test_a_failover_fault_reads_as_it_always_did() -> None:
    read = topology({"at": "5s", "kill": "switch2", "restart_after": "3s"},
                    {"at": "1s", "delay": "200ms", "for": "2s"})
    assert [(f.kind, f.describe()) for f in read.faults] == [
        ("switch-restart", "switch2 killed, started again after 3s"),
        ("delay-spike", "backbone delay +200ms for 2s")]
    assert not any(f.scheduled_only for f in read.faults)
    assert all(f.scheduled_only for f in topology(*EVERY_KIND[:7]).faults)


@pytest.mark.parametrize(("fault", "said"), [
    # the entry's own keys: none, two events, a key of another kind, one missing
    ({"at": "1s"}, "faults.0: a fault is one of kill, link, loss or delay, or a schedule's "
     "event (flap, partition, ramp, churn), and this one gives none"),
    ({"flap": "backbone", "churn": "10%", "over": "1s"}, "gives flap and churn"),
    ({"flap": "backbone", "times": 3, "down": "1s", "up": "1s", "for": "2s"},
     "for does not belong to a flap (it takes at, times, down, up): drop 'for'"),
    ({"flap": "backbone", "times": 3, "down": "1s"},
     "a flap needs up: e.g. {at: 5s, flap: backbone, times: 5, down: 1s, up: 1s}"),
    ({"churn": "10%"}, "a churn needs over"),
    ({"partition": [["switch1"], ["switch2"]]}, "a partition needs for"),
    ({"ramp": "delay", "from": "0ms", "to": "10ms"}, "a ramp needs over"),
    # values
    ({"flap": "backbone", "times": 1, "down": "1s", "up": "1s"},
     "times: 1 is outside 2 to 50"),
    ({"flap": "backbone", "times": 40, "down": "1s", "up": "1s"},
     "this flap lasts 79s in all, more than 60s"),
    ({"flap": "backbone", "times": 3, "down": "50ms", "up": "1s"},
     "down: 50ms is outside 100ms to 60s"),
    ({"ramp": "loss", "from": "5%", "to": "5%", "over": "1s"},
     "a ramp from 5% to the same value changes nothing"),
    ({"ramp": "loss", "from": "fast", "to": "5%", "over": "1s"},
     "from: 'fast' is not a percentage"),
    ({"ramp": "delay", "from": "0ms", "to": "10ms", "over": "1s", "step": "2s"},
     "step: 2s is outside 100ms to the ramp's `over`"),
    ({"churn": "0%", "over": "1s"}, "a churn of 0% restarts no machine"),
    ({"at": "90000s", "link": "backbone", "for": "1s"},
     "at: 90000s is outside 0s to a day after the load's start"),
    ({"partition": [["switch1"]], "for": "1s"}, "a partition is at least two non-empty sets"),
    ({"partition": [["switch1"], ["switch1", "switch2"]], "for": "1s"},
     "switch1 is in more than one set"),
    ({"kill": {"machines": 0}}, "is no role: a role is a switch's name"),
    # against the topology
    ({"kill": "switch9"}, "faults.0.kill: no switch named 'switch9': name one of switch1, "
     "switch2, switch3, or 'control-plane' for the overlay's control plane, 'server' for "
     "the room's server, {machines: N} for N of the room's machines"),
    ({"kill": {"machines": 30}}, "faults.0.kill: 30 machines, and the room has 20"),
    ({"partition": [["switch1"], ["switch7"]], "for": "1s"},
     "faults.0.partition: no switch named 'switch7'"),
    ({"ramp": "rate", "from": "1kbit", "to": "1mbit", "over": "1s"},
     "faults.0.from: the backbone with rate 1kbit is no link vnetbench can shape (1kbit "
     "is below 10kbit"),
    ({"ramp": "delay", "from": "0ms", "to": "1200ms", "over": "1s"},
     "faults.0.to: the backbone with delay 1.2s is no link"),
    ({"churn": "1%", "over": "1s"}, "faults.0.churn: 1% of the room's 20 machines restarts "
     "none: give at least 2.5%"),
])
def test_a_wrong_event_is_named_with_its_fix(fault: dict[str, Any], said: str) -> None:
    message = refused(fault)
    assert said in " ".join(message.split()), message
    assert message.startswith("t.yml is not a valid topology")


def test_a_schedule_s_event_may_come_late_in_a_long_load() -> None:
    """`at` is bound by the load the schedule runs under (a contest's end rush, minutes
    in), not by failover's minute: the entry reads, and its steps come that late."""
    flap = {"at": "400s", "flap": "backbone", "times": 3, "down": "1s", "up": "2s"}
    schedule = expand(topology(flap))
    assert [s.at_ms for s in schedule.steps][:2] == [400_000.0, 401_000.0]
    assert schedule.end_ms == 407_000.0


def test_every_entry_s_problem_is_said_at_once() -> None:
    message = refused({"flap": "backbone", "times": 1, "down": "1s"}, {"churn": "0%"},
                      {"at": "1s"})
    assert re.findall(r"faults\.(\d)", message) == ["0", "1", "2"]
    assert "a flap needs up" in message and "times: 1 is outside" in message


def scheduled_refused(*faults: dict[str, Any]) -> str:
    """A schedule over one load (expand, as a room runs it) that is refused; the same
    entries parse, since failover injects them one after another."""
    parsed = topology(*faults)
    with pytest.raises(UserError) as raised:
        expand(parsed)
    return str(raised.value)


def test_events_on_one_target_may_not_overlap() -> None:
    message = scheduled_refused(
        {"at": "5s", "flap": "backbone", "times": 2, "down": "1s", "up": "1s"},
        {"at": "6s", "partition": [["switch1"], ["switch2"]], "for": "1s"})
    assert ("faults.1 (partition, 6s to 7s) overlaps faults.0 (backbone-flap, 5s to 8s) "
            "on the backbone's drop rules: one event at a time on one target") in message
    assert "start it at 8s or later" in message
    forever = scheduled_refused({"at": "1s", "kill": "switch2"},
                      {"at": "3s", "kill": "switch2", "restart_after": "1s"})
    assert "faults.0 holds it for good" in forever
    machines = scheduled_refused({"at": "1s", "churn": "20%", "over": "5s"},
                       {"at": "2s", "kill": {"machines": 2}, "restart_after": "1s"})
    assert "on the room's machines" in machines


def test_events_that_touch_or_act_on_other_targets_do_not_overlap() -> None:
    faults = topology(
        {"at": "1s", "link": "backbone", "for": "2s"},
        {"at": "3s", "flap": "backbone", "times": 2, "down": "1s", "up": "1s"},  # at its end
        {"at": "1s", "delay": "100ms", "for": "5s"},  # the backbone's shaping, not drops
        {"at": "1s", "kill": "switch1", "restart_after": "1s"},
        {"at": "1s", "kill": "switch2", "restart_after": "1s"}).faults
    assert overlap_problems(faults) == []


def test_a_churn_restarts_the_nearest_whole_number_of_machines() -> None:
    assert [churn_count(share, 20) for share in (20, 2.4, 2.5, 1)] == [4, 0, 1, 0]
