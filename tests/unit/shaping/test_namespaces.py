"""Shaping from the host: which plans need a shaper of their own, and the host shaper's
output (recorded: tests/data/shaping/README.md) read back per namespace."""

from __future__ import annotations

from pathlib import Path

import pytest

from vnetbench.engines.base import Listed, RunRef, ToolOutput, ToolSpec
from vnetbench.runtime import labels
from vnetbench.shaping.namespaces import (
    HOST_SHAPER_ROLE,
    NAMESPACES_PER_CALL,
    Output,
    Placed,
    applied_lines,
    chunks,
    ensure_host_shapers,
    needs_own_shaper,
    read_sections,
    run_in_namespaces,
    seen_or_why,
)

DATA = Path(__file__).parents[2] / "data" / "shaping"


def test_only_a_delay_line_needs_a_shaper_of_its_own() -> None:
    line = {"queue": 0, "delay_ms": 10, "jitter_ms": 0, "reorder": False}
    assert needs_own_shaper({"interfaces": [{"address": "a", "commands": [["tc"]],
                                              "delay_line": None},
                                             {"address": "b", "commands": [],
                                              "delay_line": line}]})
    assert not needs_own_shaper({"interfaces": [{"address": "a", "commands": [["tc"]],
                                                  "delay_line": None}]})
    assert not needs_own_shaper({"interfaces": []})


def test_each_namespace_s_outcome_is_read_from_its_own_line() -> None:
    said = applied_lines((DATA / "host-applied.txt").read_text())
    assert said[4102] == ""
    assert said[4101] == "vnetbench-shape: no interface holds 10.255.255.1"
    assert said[999999].startswith("[Errno 2] No such file or directory")
    assert applied_lines("vnetbench-shape: ran tc qdisc ...\nvnetbench-shape@x applied") == {}


def test_each_namespace_reads_back_as_its_own_and_a_gone_one_says_so() -> None:
    sections = read_sections((DATA / "host-read.txt").read_text())
    assert set(sections) == {4101, 4102, 999999}
    router, agent = seen_or_why(sections[4101]), seen_or_why(sections[4102])
    assert not isinstance(router, str) and not isinstance(agent, str)
    # the router holds the backbone (50 Mbit/s) and its site (200), the agent its site
    assert sorted(q["options"]["rate"] for q in router.qdiscs if q["kind"] == "tbf") == [
        50_000_000 // 8, 200_000_000 // 8]
    assert [q["options"]["rate"] for q in agent.qdiscs if q["kind"] == "tbf"] == [
        200_000_000 // 8]
    assert len(router.devices) == 3 and len(agent.devices) == 2  # lo too
    assert set(router.offloads) == {"lo", "eth0", "eth1"}  # its own, not the shaper's
    assert seen_or_why(sections[999999]) == (
        "its namespace could not be entered (its process is gone)")
    assert seen_or_why(None).startswith("its namespace could not be entered")


@pytest.mark.parametrize("cut", [0.3, 0.6, 0.9])
def test_a_section_cut_short_is_not_taken_for_what_the_namespace_applies(cut: float) -> None:
    text = (DATA / "host-read.txt").read_text()
    first = text.split("@@vnetbench-namespace@@ 4102")[0]
    sections = read_sections(first[:int(len(first) * cut)])
    assert 4101 in sections  # read, but not whole
    assert str(seen_or_why(sections[4101])).startswith("its output did not come back whole")


def test_calls_go_to_each_host_s_shaper_at_most_a_call_s_worth_each() -> None:
    placed = [Placed(f"m{i}", "node1" if i % 3 else "node2", 100 + i) for i in range(250)]
    found = chunks(placed, {"node1": "s1", "node2": "s2"})
    assert all(len(group) <= NAMESPACES_PER_CALL for _, group in found)
    assert all({t.host for t in group} == {"node1" if shaper == "s1" else "node2"}
               for shaper, group in found)
    assert sorted(t.container for _, group in found for t in group) == sorted(
        t.container for t in placed)


class Engine:
    """The host shapers listed (name, state, host), and what was removed and started."""

    def __init__(self, listed: list[tuple[str, str, str]]) -> None:
        self.listed = [Listed(name, name, state, None, {}, host) for name, state, host in listed]
        self.removed: list[str] = []
        self.started: list[tuple[str, ToolSpec]] = []

    def containers(self, filters: object) -> list[Listed]:
        return self.listed

    def remove(self, name: str) -> None:
        self.removed.append(name)

    def start_tool(self, target: str, tool: ToolSpec) -> str:
        self.started.append((target, tool))
        return tool.name or ""


def test_a_host_shaper_a_host_started_where_none_runs_and_a_stopped_one_replaced() -> None:
    engine = Engine([("p-host1-shaper", "running", "node1"),
                     ("p-host2-shaper", "exited", "node2")])
    found = ensure_host_shapers(RunRef(engine, "p"),  # type: ignore[arg-type]
                                [Placed("p-a", "node1", 11), Placed("p-b", "node2", 12),
                                 Placed("p-c", "node3", 13), Placed("p-d", "node3", 14)])
    assert found == {"node1": "p-host1-shaper", "node2": "p-host2-shaper",
                     "node3": "p-host3-shaper"}
    assert [(target, tool.name) for target, tool in engine.started] == [
        ("p-b", "p-host2-shaper"), ("p-c", "p-host3-shaper")]
    assert engine.removed == ["p-host2-shaper"]  # its own stopped one; a new name, nothing
    tool = engine.started[0][1]
    assert tool.host_pids and {"SYS_ADMIN", "SYS_PTRACE", "NET_ADMIN"} <= set(tool.capabilities)
    assert tool.labels[labels.ROLE] == HOST_SHAPER_ROLE and tool.labels[labels.RUN] == "p"


class ReadingEngine(Engine):
    """A host shaper on node1 only, answering READ_LOOP from host-read.txt, or failing
    every call (`fails`)."""

    def __init__(self, fails: bool = False) -> None:
        super().__init__([("p-host1-shaper", "running", "node1")])
        self.fails = fails

    def execute(self, container: str, argv: list[str]) -> ToolOutput:
        if self.fails:
            return ToolOutput(1, "", "exec failed: container is restarting")
        return ToolOutput(0, (DATA / "host-read.txt").read_text(), "")


def test_a_host_without_a_shaper_or_a_failed_call_says_so_for_its_own_containers() -> None:
    placed = [Placed("p-router-switch1", "node1", 4101), Placed("p-agent1", "node1", 4102),
              Placed("p-gone", "node1", 999999), Placed("p-elsewhere", "node2", 7)]
    found = run_in_namespaces(RunRef(ReadingEngine(), "p"),  # type: ignore[arg-type]
                              placed, "true")
    assert found["p-router-switch1"].text and found["p-agent1"].text
    assert found["p-router-switch1"].text != found["p-agent1"].text
    assert (found["p-gone"].text, found["p-gone"].why) == (
        None, "its namespace could not be entered (its process is gone)")
    assert found["p-elsewhere"] == Output(None, "no host shaper runs on node2")
    failing = run_in_namespaces(RunRef(ReadingEngine(fails=True), "p"),  # type: ignore[arg-type]
                                placed, "true")
    assert failing["p-elsewhere"].why == "no host shaper runs on node2"
    assert all("container is restarting" in failing[t.container].why for t in placed[:3])
