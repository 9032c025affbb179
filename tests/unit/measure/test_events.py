"""lookup_events: one event of one role, on the recorded vNet logs."""

from __future__ import annotations

from pathlib import Path

from vnetbench.engines.base import Source
from vnetbench.measure.events import COLUMNS, lookup_events
from vnetbench.overlays.vnet.profile import load_profile

LOGS = Path(__file__).resolve().parents[2] / "data" / "vnet-logs"
ROLES = {"conductor": "conductor", "switch1": "switch", "switch2": "switch",
         "agent1": "agent", "agent2": "agent", "agent3": "agent"}


def sources() -> list[Source]:
    return [Source(name, role, name, (LOGS / f"{name}.log").read_text())
            for name, role in ROLES.items()]


def test_one_event_of_one_role() -> None:
    frame = lookup_events(sources(), load_profile().events, "conductor", "agent_joined")
    assert set(frame["event"]) == {"agent_joined"}
    assert [(f["agent"], f["switch"]) for f in frame["fields"]] == [
        ("agent1", "switch2"), ("agent2", "switch1"), ("agent3", "switch2"),
        ("agent4", "switch1")]
    assert frame["time"].is_monotonic_increasing


def test_other_roles_logs_and_events_are_left_out() -> None:
    # agents log "authenticated" too; asked for the switches' event, only theirs count
    frame = lookup_events(sources(), load_profile().events, "switch", "agent_authenticated")
    assert set(frame["role"]) == {"switch"}
    assert set(frame["event"]) == {"agent_authenticated"}
    assert len(frame) == 4


def test_no_pattern_is_an_empty_frame() -> None:
    for role, event in [("switch", "no_such_event"), ("hub", "ready")]:
        frame = lookup_events(sources(), load_profile().events, role, event)
        assert frame.empty
        assert list(frame.columns) == COLUMNS
    assert lookup_events(sources(), {}, "conductor", "agent_joined").empty


def test_an_event_that_did_not_happen_is_an_empty_frame() -> None:
    frame = lookup_events(sources(), load_profile().events, "switch", "limiter_drops")
    assert frame.empty
    assert frame.drop_duplicates("container").empty  # what signal_and_wait does with it
