"""Plan against read-back (shaping/verify.py), on what a real namespace reported
(tests/data/shaping/README.md says how each file was recorded)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from vnetbench.model.topology import LinkProfile
from vnetbench.shaping.plan import plan_interface
from vnetbench.shaping.verify import Seen, compare, parse_seen

DATA = Path(__file__).parents[2] / "data" / "shaping"
WHERE = "RUN-router-switch1"
PLAN: list[dict[str, Any]] = json.loads((DATA / "spec.json").read_text())["interfaces"]


def seen(name: str) -> Seen:
    return parse_seen((DATA / name).read_text())


def test_a_namespace_as_shaped_holds_every_planned_item() -> None:
    result = compare(PLAN, seen("as-planned.txt"), WHERE)
    assert result.changed == []
    assert f"{WHERE} eth0: tbf 1: rate 20000000bit burst 16384 latency 50ms" in result.held
    assert f"{WHERE} eth1: tbf 1: rate 50000000bit burst 25000 latency 50ms" in result.held
    # probability 0.050000 planned, 0.04999999981 (a 32-bit fraction) read back
    assert (f"{WHERE} eth0: rule 'raw: -A PREROUTING -i eth0 -m statistic --mode random "
            "--probability 0.050000 -j DROP'") in result.held
    lines = [h for h in result.held if "delay line" in h]
    # read right after the shaping's own read at bring-up: nothing crossed in between
    assert lines == [
        f"{WHERE} eth0: delay line on queue 0 (10 ms, jitter 0 ms) listening, no drops of its "
        "own, on time: 0 of its 0 packets in 0.068 s, 0 a second held over 1 ms past their "
        "due time, the latest 0.0 ms",
        f"{WHERE} eth1: delay line on queue 1 (2 ms, jitter 1 ms) listening, no drops of its "
        "own, on time: 0 of its 0 packets in 0.068 s, 0 a second held over 1 ms past their "
        "due time, the latest 0.0 ms"]
    # eth0: offloads off (3), tbf, statistic, NFQUEUE, line; eth1: tbf, NFQUEUE, line
    assert len(result.held) == 10


def test_a_changed_rate_is_named_with_both_values() -> None:
    assert compare(PLAN, seen("rate-changed.txt"), WHERE).changed == [
        f"{WHERE} eth0: tbf 1: changed: rate 2e+07 bit/s planned, 1e+07 bit/s applied"]


DELETED = (f"{WHERE} eth0: tbf 1: rate 20000000bit burst 16384 latency 50ms is gone "
           "(there now: noqueue 0:)")


def test_a_deleted_qdisc_is_gone_and_says_what_is_there() -> None:
    assert compare(PLAN, seen("qdisc-deleted.txt"), WHERE).changed == [DELETED]


def test_a_doubled_rule_and_an_offload_turned_back_on() -> None:
    """A second statistic rule doubles the loss (as a profile applied twice would).
    Recorded after the qdisc's deletion, which still shows."""
    assert compare(PLAN, seen("rule-doubled-gro-on.txt"), WHERE).changed == [
        DELETED,
        f"{WHERE} eth0: rule 'raw: -A PREROUTING -i eth0 -m statistic --mode random "
        "--probability 0.04999999981 -j DROP' was not planned",
        f"{WHERE} eth0: generic-receive-offload is on (planned off)"]


def test_a_killed_shaper_leaves_its_rules_and_no_listener() -> None:
    killed = seen("shaper-killed.txt")
    assert any("NFQUEUE --queue-num 0" in r for r in killed.rules)
    assert killed.queues == {}
    changed = compare(PLAN, killed, WHERE).changed
    lines = [c for c in changed if "delay line" in c]
    assert lines == [
        f"{WHERE} eth0: no delay line on queue 0 (10 ms, jitter 0 ms) listens: the kernel "
        "drops what the rule queues there",
        f"{WHERE} eth1: no delay line on queue 1 (2 ms, jitter 1 ms) listens: the kernel "
        "drops what the rule queues there"]
    assert len(changed) == 5  # and the three changes recorded before the kill


def test_drops_of_the_line_itself_count_since_the_last_check() -> None:
    # queue_dropped and user_dropped (columns 6 and 7) of queue 1 made non-zero
    text = (DATA / "as-planned.txt").read_text().replace(
        "    1 2618362791     0 1     0     0     0", "    1 2618362791     0 1     0    30     7")
    full = parse_seen(text)
    assert full.queues[1].dropped == 37
    assert compare(PLAN, full, WHERE).changed == [
        f"{WHERE} eth1: the delay line on queue 1 (2 ms, jitter 1 ms) dropped 37 packet(s) "
        "of its own (its queue was full or its reader behind)"]
    assert compare(PLAN, full, WHERE, dropped_before={1: 37}).changed == []


def test_an_address_no_interface_holds_any_more() -> None:
    moved = seen("as-planned.txt")
    moved.devices.pop("10.160.16.2")
    assert compare(PLAN, moved, WHERE).changed == [
        f"{WHERE}: no interface holds 10.160.16.2 any more, so its shaping is gone"]


NETEM_PROFILE = LinkProfile.model_validate({"rate": "100mbit", "delay": "10ms",
                                            "jitter": "2ms", "loss": "1%"})


def netem_seen(change: dict[str, Any] | None = None) -> Seen:
    qdiscs = json.loads((DATA / "netem-qdiscs.json").read_text())
    qdiscs[1]["options"] |= change or {}
    return Seen({"10.0.0.2": "eth0"}, qdiscs, [], {}, {})


def netem_plan() -> list[dict[str, Any]]:
    plan = plan_interface(NETEM_PROFILE, {"netem", "tbf"})
    return [{"address": "10.0.0.2", "commands": plan.commands, "delay_line": None}]


def test_netem_with_its_tbf_child_as_planned() -> None:
    result = compare(netem_plan(), netem_seen(), "agent1")
    assert result.changed == []
    assert result.held == [
        "agent1 eth0: netem 1: limit 1000 delay 10ms 2ms loss 1%",
        "agent1 eth0: tbf 10: rate 100000000bit burst 50000 latency 50ms"]


@pytest.mark.parametrize(("change", "said"), [
    ({"delay": {"delay": 0.005, "jitter": 0.002}}, "delay 10 ms planned, 5 ms applied"),
    ({"delay": {"delay": 0.01, "jitter": 0.0}}, "jitter 2 ms planned, 0 ms applied"),
    ({"loss-random": {"loss": 0.05}}, "loss 1 % planned, 5 % applied"),
    ({"limit": 10}, "limit 1000 packets planned, 10 packets applied"),
])
def test_netem_changes_are_named(change: dict[str, Any], said: str) -> None:
    assert compare(netem_plan(), netem_seen(change), "agent1").changed == [
        f"agent1 eth0: netem 1: changed: {said}"]


def test_netem_loss_removed_behind_the_plan() -> None:
    qdiscs = netem_seen().qdiscs
    del qdiscs[1]["options"]["loss-random"]
    assert compare(netem_plan(), Seen({"10.0.0.2": "eth0"}, qdiscs, [], {}, {}),
                   "agent1").changed == ["agent1 eth0: netem 1: changed: loss 1 % planned, "
                                         "0 % applied"]


def test_an_unplanned_qdisc_on_a_shaped_interface() -> None:
    qdiscs = [*netem_seen().qdiscs, {"kind": "ingress", "handle": "ffff:", "dev": "eth0",
                                     "parent": "ffff:fff1", "options": {}}]
    assert compare(netem_plan(), Seen({"10.0.0.2": "eth0"}, qdiscs, [], {}, {}),
                   "agent1").changed == ["agent1 eth0: qdisc ingress ffff: was not planned"]


def test_a_shaper_that_cannot_be_shaping_says_why() -> None:
    from datetime import UTC, datetime

    from vnetbench.shaping.apply import ShaperState, not_serving

    when = datetime(2026, 12, 1, 8, 56, 43, tzinfo=UTC)
    state = ShaperState("x-shaper", "id1", running=False, paused=False, exit_code=137,
                        started=None, finished=when)
    assert not_serving("x-shaper", state) == "x-shaper exited (137) at 08:56:43 UTC"
    assert not_serving("x-shaper", None) == "x-shaper is gone (removed)"
    paused = ShaperState("x-shaper", "id1", True, True, 0, when, None)
    assert "paused" in not_serving("x-shaper", paused)
    assert not_serving("x-shaper", ShaperState("x-shaper", "id1", True, False, 0, when,
                                               None)) == ""
