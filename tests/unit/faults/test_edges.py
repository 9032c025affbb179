"""Link faults by staged helpers: the rule per fault, the helper's output read into
stamps, and the helper's own script run here with stand-ins for ip and iptables and
the tools image's real vnetbench-at (no engine, no privileges)."""

from __future__ import annotations

import os
import stat
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from vnetbench.engines.base import EngineError, Listed, ToolOutput, ToolSpec
from vnetbench.faults.edges import (
    FAULT_SCRIPT,
    Edge,
    drop_match,
    fault_argv,
    lifted_everywhere,
    parse_fault_helper,
    read_and_clear,
    stage,
    stageable,
    staging_lead_s,
)
from vnetbench.faults.window import LATE_BOUND_S, FaultWindow
from vnetbench.measure.probe import AT_MARK
from vnetbench.model.topology import Fault

TOOLS = Path(__file__).resolve().parents[3] / "images" / "tools"

RECORDED = """vnetbench-fault: staged dev=eth1
vnetbench-at began=1796127230.370012 late_s=0.000812
vnetbench-fault: applied at=1796127230.381544012
vnetbench-at began=1796127233.370101 late_s=0.000901
vnetbench-fault: lifted at=1796127233.379871223
"""


def test_a_link_down_drops_everything_a_loss_burst_a_random_share() -> None:
    assert drop_match(Fault.model_validate({"link": "backbone", "for": "3s"})) == []
    assert drop_match(Fault.model_validate({"loss": "50%", "for": "2s"})) == [
        "-m", "statistic", "--mode", "random", "--probability", "0.500000"]
    assert drop_match(Fault.model_validate({"loss": "100%", "for": "2s"})) == []


def test_what_is_staged_and_what_is_re_shaped() -> None:
    down = Fault.model_validate({"link": "backbone", "for": "3s"})
    burst = Fault.model_validate({"loss": "50%", "for": "2s"})
    spike = Fault.model_validate({"delay": "200ms", "for": "1s"})
    assert stageable(down, set()) and stageable(burst, {"statistic"})
    assert not stageable(burst, {"netem"}) and not stageable(spike, {"statistic", "netem"})
    # all of it lost is a plain drop: no statistic needed
    assert stageable(Fault.model_validate({"loss": "100%", "for": "1s"}), set())


def test_staging_starts_helpers_four_at_once_a_second_each_with_a_margin() -> None:
    assert staging_lead_s(2) == 2.0 and staging_lead_s(4) == 2.0
    assert staging_lead_s(5) == 3.0


def test_the_helpers_output_gives_its_apply_and_lift_stamps() -> None:
    found = parse_fault_helper("router-switch2-fault", RECORDED)
    assert found.failure is None
    assert found.apply is not None and found.lift is not None
    assert (found.apply.began, found.apply.late_s) == (1796127230.370012, 0.000812)
    assert found.apply.done == pytest.approx(1796127230.381544)
    assert found.lift.done == pytest.approx(1796127233.379871)


def test_a_helper_that_failed_to_lift_has_no_lift_done_and_says_why() -> None:
    text = RECORDED.split("vnetbench-fault: lifted")[0] + \
        "iptables: Bad rule (does a matching rule exist in that chain?).\n" \
        "vnetbench-fault: failed lift (iptables exit 1)\n"
    found = parse_fault_helper("h", text)
    assert found.apply is not None and found.apply.done is not None
    assert found.lift is not None and found.lift.done is None
    assert found.failure == "lift (iptables exit 1)"
    assert parse_fault_helper("h", "").failure is not None  # never started


def stand_ins(directory: Path, log: Path) -> dict[str, str]:
    """ip answering for one address, iptables logging its arguments with the time."""
    def script(name: str, body: str) -> None:
        path = directory / name
        path.write_text("#!/bin/sh\n" + body)
        path.chmod(path.stat().st_mode | stat.S_IEXEC)
    script("ip", "echo '2: eth1    inet 10.9.0.2/24 brd 10.9.0.255 scope global eth1'\n")
    script("iptables", f'echo "$(date +%s.%N) $*" >> {log}\n')
    os.symlink(TOOLS / "vnetbench-at", directory / "vnetbench-at")
    return {**os.environ, "PATH": f"{directory}:/usr/bin:/bin"}


@pytest.mark.skipif(not Path("/usr/bin/python3").exists(), reason="vnetbench-at needs it")
def test_the_helper_stages_then_applies_and_lifts_at_its_instants(tmp_path: Path) -> None:
    bin_dir, log = tmp_path / "bin", tmp_path / "iptables.log"
    bin_dir.mkdir()
    # on the millisecond: the helper's argv (6 decimals) holds these instants exactly
    apply_at = round(time.time() + 0.8, 3)
    lift_at = apply_at + 0.4
    argv = fault_argv("10.9.0.2", apply_at, lift_at,
                      drop_match(Fault.model_validate({"loss": "30%", "for": "1s"})))
    assert argv[:3] == ["sh", "-c", FAULT_SCRIPT]
    done = subprocess.run(argv, env=stand_ins(bin_dir, log), capture_output=True,
                          text=True, timeout=20)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "vnetbench-fault: staged dev=eth1"
    assert lines[1].startswith(AT_MARK) and lines[3].startswith(AT_MARK)
    found = parse_fault_helper("h", done.stdout)
    assert found.apply is not None and found.lift is not None
    assert found.apply.done is not None and found.lift.done is not None
    # each step began at its instant, not before, and its stamp follows iptables'
    assert found.apply.began >= apply_at and found.lift.began >= lift_at
    calls = [line.split(" ", 1) for line in log.read_text().splitlines()]
    assert [words.split()[2:5] for _, words in calls] == [
        ["raw", "-I", "PREROUTING"], ["raw", "-D", "PREROUTING"]]
    assert all("-i eth1 -m statistic --mode random --probability 0.300000 -j DROP" in words
               for _, words in calls)
    assert apply_at <= float(calls[0][0]) <= found.apply.done
    assert lift_at <= float(calls[1][0]) <= found.lift.done


def test_a_helper_finds_no_interface_and_says_so(tmp_path: Path) -> None:
    bin_dir, log = tmp_path / "bin", tmp_path / "iptables.log"
    bin_dir.mkdir()
    done = subprocess.run(fault_argv("10.9.9.9", time.time(), time.time(), []),
                          env=stand_ins(bin_dir, log), capture_output=True, text=True,
                          timeout=20)
    assert done.returncode == 1 and not log.exists()
    assert parse_fault_helper("h", done.stdout).failure == "no interface holds 10.9.9.9"


class LocalHelpers:
    """An engine that runs each helper here as a process (its target's address and
    behaviour in its environment): what stage, lifted_everywhere and read_and_clear
    ask of an engine, nothing more."""

    def __init__(self, directory: Path, env: dict[str, str],
                 targets: dict[str, dict[str, str]]) -> None:
        self.directory, self.env, self.targets = directory, env, targets
        self.running: dict[str, subprocess.Popen[str]] = {}
        self.cleared: list[str] = []
        self.removed: list[list[str]] = []  # each remove_all's names

    def start_tool(self, target: str, tool: ToolSpec) -> str:
        if self.targets[target].get("REFUSE"):
            raise EngineError("no such container: " + target)
        assert tool.name and "NET_ADMIN" in tool.capabilities and tool.keep
        out = (self.directory / f"{tool.name}.log").open("w")
        self.running[tool.name] = subprocess.Popen(
            list(tool.argv), stdout=out, stderr=subprocess.STDOUT, text=True,
            env={**self.env, **self.targets[target], "TARGET": target})
        return tool.name

    def logs(self, name: str) -> str:
        path = self.directory / f"{name}.log"
        if not path.exists():
            raise EngineError(f"no such container: {name}")
        return path.read_text()

    def containers(self, filters: list[tuple[str, str]]) -> list[Listed]:
        name = filters[0][1].strip("^$")
        process = self.running.get(name)
        state = "running" if process and process.poll() is None else "exited"
        return [Listed(name, name, state, None, {})] if process else []

    def remove(self, name: str) -> None:
        if process := self.running.pop(name, None):
            process.kill()
            process.wait()

    def remove_all(self, names: list[str]) -> None:
        assert not self.cleared, "a rule was cleared while its helper still ran"
        self.removed.append(list(names))
        for name in names:
            self.remove(name)

    def run_tool(self, target: str, tool: ToolSpec) -> ToolOutput:
        self.cleared.append(target)
        done = subprocess.run(list(tool.argv), capture_output=True, text=True, timeout=20,
                              env={**self.env, **self.targets[target], "TARGET": target})
        return ToolOutput(done.returncode, done.stdout, done.stderr)


@dataclass
class LocalRun:
    engine: Any
    run_id: str = "t"


@pytest.mark.skipif(not Path("/usr/bin/python3").exists(), reason="vnetbench-at needs it")
def test_staged_helpers_on_every_edge_give_one_window_and_name_what_failed(
        tmp_path: Path) -> None:
    """Three edges staged at once: two apply and lift at their instants, a third the
    engine refuses; one whose lift fails has its rule cleared by a one-shot helper."""
    bin_dir, log = tmp_path / "bin", tmp_path / "iptables.log"
    bin_dir.mkdir()
    env = stand_ins(bin_dir, log)
    (bin_dir / "ip").write_text("#!/bin/sh\necho \"2: eth1    inet $ADDRESS/24 scope global\"\n")
    (bin_dir / "iptables").write_text(
        f'#!/bin/sh\necho "$(date +%s.%N) $TARGET $*" >> {log}\n'
        'case "$*" in *" -D "*) [ -z "$FAIL_LIFT" ] || exit 1;; esac\n')
    targets = {"router-switch1": {"ADDRESS": "10.9.0.1"},
               "router-switch2": {"ADDRESS": "10.9.0.2", "FAIL_LIFT": "1"},
               "router-switch3": {"ADDRESS": "10.9.0.3", "REFUSE": "1"}}
    engine = LocalHelpers(tmp_path, env, targets)
    run = LocalRun(engine)
    edges = [Edge(c, c.removeprefix("router-"), v["ADDRESS"], f"p-fault-{c}")
             for c, v in targets.items()]
    fault = Fault.model_validate({"link": "backbone", "for": "500ms"})
    # on the millisecond: the helper's argv (6 decimals) holds these instants exactly
    apply_at = round(time.time() + 1.0, 3)
    lift_at = apply_at + 0.5
    refused = stage(run, edges, fault, apply_at, lift_at)
    assert list(refused) == ["p-fault-router-switch3"]
    waiting = lifted_everywhere(run, edges)
    if time.time() < lift_at:  # asked wholly before the lift instant (a loaded host may
        # stage past it): no helper can have lifted or failed yet, each is in vnetbench-at
        assert not waiting
    for process in engine.running.values():  # each ends after its lift: a hang guard
        process.wait(timeout=120)
    assert lifted_everywhere(run, edges)  # every helper ended
    window = FaultWindow(tuple(read_and_clear(run, edges, fault, refused)), 500.0)
    first, failed_lift, not_started = window.edges
    assert first.apply and first.lift and first.apply.done and first.lift.done
    # vnetbench-at sleeps until its instant, so a step begins at it or after, never before
    # (after by any amount: a helper started late, or woken late, on a loaded host)
    assert apply_at <= first.apply.began and lift_at <= first.lift.began
    assert failed_lift.failure == "lift (iptables exit 1)"
    assert not_started.failure and "no such container" in not_started.failure
    assert window.start is not None and window.start >= apply_at
    assert window.end is None  # not lifted everywhere
    said = window.problems()
    failed = [p for p in said if " failed: " in p]
    assert [p.split(" failed")[0] for p in failed] == [
        "p-fault-router-switch2", "p-fault-router-switch3"]
    # the rest, one per step that began over the bound after its instant, naming its edge:
    # how late is the scheduler's (a unit test sets no speed), that it is said is not
    late = [e.edge for e in window.edges for s in (e.apply, e.lift)
            if s is not None and s.late_s > LATE_BOUND_S]
    assert [step.edge for step in window.late_steps()] == late
    # a step woken late within the bound is a note, any other late one a problem
    assert [p for p in said if p not in failed] == [
        step.said() for step in window.late_steps() if not step.stands]
    assert window.notes() == [step.said() for step in window.late_steps() if step.stands]
    # the rule a failed lift left: a one-shot helper deletes it, on that edge alone
    assert engine.cleared == ["router-switch2"]
    assert engine.running == {}  # every helper removed
    # in one removal of the two it started (the refused one never ran), before the clear
    assert engine.removed == [["p-fault-router-switch1", "p-fault-router-switch2"]]
