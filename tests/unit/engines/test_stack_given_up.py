"""A bring-up stops waiting for an agent its server refused for good (vNet's snapshot:
"Rejected agent: invalid token", and the agent does not try again): failed once it has
stayed refused REFUSAL_GRACE_S, the servers' logs read only while no agent became ready
for REFUSAL_LOOK_S, at most that often."""

from __future__ import annotations

import pytest

from vnetbench.engines import stack
from vnetbench.engines.stack import REFUSAL_GRACE_S, REFUSAL_LOOK_S, GivenUp


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    ticking = Clock()
    monkeypatch.setattr(stack.time, "monotonic", ticking)
    return ticking


def test_a_refused_agent_is_given_up_after_the_grace_and_its_reason_kept(clock: Clock) -> None:
    looks: list[set[str]] = []

    def refused(starting: set[str]) -> dict[str, str]:
        looks.append(set(starting))
        return {"agent2": "refused by switch2 (invalid token)"} if "agent2" in starting else {}

    given_up = GivenUp(refused)
    assert given_up.of({"agent1", "agent2"}) == set()  # a new set: not read yet
    clock.now += REFUSAL_LOOK_S
    assert given_up.of({"agent1", "agent2"}) == set()  # read: refused, within its grace
    assert looks == [{"agent1", "agent2"}]
    clock.now += REFUSAL_GRACE_S
    assert given_up.of({"agent1", "agent2"}) == {"agent2"}  # agent1: still only starting
    assert given_up.reasons == {"agent2": "refused by switch2 (invalid token)"}


def test_no_read_while_agents_still_become_ready(clock: Clock) -> None:
    looks: list[set[str]] = []
    given_up = GivenUp(lambda starting: looks.append(set(starting)) or {})
    waiting = {f"agent{n}" for n in range(10)}
    while len(waiting) > 1:  # one ready every second: the set keeps changing
        waiting.pop()
        assert given_up.of(waiting) == set()
        clock.now += 1.0
    assert looks == []
    clock.now += REFUSAL_LOOK_S
    given_up.of(waiting)
    assert looks == [waiting]
    given_up.of(waiting)  # at most every REFUSAL_LOOK_S
    assert len(looks) == 1


def test_an_agent_that_tried_again_and_is_no_longer_refused_is_not_given_up(
        clock: Clock) -> None:
    answers = iter([{"agent2": "refused"}, {}])
    given_up = GivenUp(lambda starting: next(answers))
    clock.now += REFUSAL_LOOK_S
    given_up.of({"agent2"})
    clock.now += REFUSAL_LOOK_S + REFUSAL_GRACE_S
    assert given_up.of({"agent2"}) == set()  # the second read: no longer refused
