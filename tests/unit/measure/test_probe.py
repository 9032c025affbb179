"""run_probe: the tool bounded by timeout(1), its output held in the probe until it ends."""

from __future__ import annotations

import subprocess
import sys
import time
from dataclasses import dataclass, field
from types import ModuleType, SimpleNamespace

import pytest

from tests.tool_scripts import TOOLS, load_tool
from vnetbench.engines.base import ToolOutput, ToolSpec
from vnetbench.measure.probe import at_instant, held, run_probe, split_began


def test_held_output_keeps_stdout_stderr_and_status() -> None:
    """The wrapper runs in the probe's sh; here in the host's, on the same script: what
    the tool printed comes out whole and apart, after it ended, with its exit status."""
    tool = ["sh", "-c", 'echo one; echo said >&2; echo two; exit 3']
    done = subprocess.run(held(tool), capture_output=True, text=True, check=False)
    assert (done.stdout, done.stderr, done.returncode) == ("one\ntwo\n", "said\n", 3)


def test_held_output_keeps_arguments_apart() -> None:
    done = subprocess.run(held(["printf", "%s|", "a b", "$HOME", ""]), capture_output=True,
                          text=True, check=False)
    assert (done.stdout, done.returncode) == ("a b|$HOME||", 0)


@dataclass
class Engine:
    calls: list[tuple[str, ToolSpec]] = field(default_factory=list)

    def run_tool(self, target: str, tool: ToolSpec) -> ToolOutput:
        self.calls.append((target, tool))
        return ToolOutput(0, "out", "")


@dataclass
class Run:
    run_id: str
    engine: Engine


def test_run_probe_bounds_then_holds_the_tool() -> None:
    engine = Engine()
    output = run_probe(Run("run1", engine), "agent1", ["ping", "-c", "3", "10.0.0.2"], 4.2)  # type: ignore[arg-type]
    target, tool = engine.calls[0]
    assert output.stdout == "out" and target == "agent1"
    assert list(tool.argv) == held(["timeout", "-k", "2", "5", "ping", "-c", "3", "10.0.0.2"])
    assert tool.labels["vnetbench.tool"] == "ping"  # the tool, not the wrapper's shell
    assert not tool.keep and tool.name is None  # removed when it ends, named by the engine


AT = TOOLS / "vnetbench-at"


def test_a_tool_started_at_an_instant_begins_then_and_says_when() -> None:
    """The tools image's vnetbench-at, run here on the same script: it waits for the
    instant, stamps its first line, then becomes the tool (its output and status)."""
    instant = round(time.time() + 0.3, 3)  # on the millisecond: argv holds it exactly
    done = subprocess.run([sys.executable, str(AT), f"{instant:.6f}", "sh", "-c",
                           "echo report; exit 4"], capture_output=True, text=True,
                          check=False)
    began, rest = split_began(done.stdout)
    assert began is not None and rest == "report\n" and done.returncode == 4
    # it never begins before the instant; how late after it is the host's (a loaded one
    # starts this program after the instant): its sleep is checked on a fake clock below
    assert instant <= began.at
    assert began.late_s == pytest.approx(began.at - instant, abs=1e-5)


def load_at() -> ModuleType:
    return load_tool("vnetbench-at")


def test_vnetbench_at_sleeps_once_exactly_until_its_instant(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """On a clock that moves only when slept on: one sleep of what is left, then the
    stamp at the instant, late by nothing, then the tool; an instant past: no sleep,
    late by as much."""
    at = load_at()
    now, slept, became = [1000.0], [], []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    monkeypatch.setattr(at, "time", SimpleNamespace(time=lambda: now[0], sleep=sleep))
    monkeypatch.setattr(at, "os", SimpleNamespace(
        execvp=lambda program, argv: became.append(argv)))
    at.main(["vnetbench-at", "1000.250000", "sh", "-c", "true"])
    began, _ = split_began(capsys.readouterr().out)
    assert slept == [0.25] and became == [["sh", "-c", "true"]]
    assert began is not None and (began.at, began.late_s) == (1000.25, 0.0)
    assert began.waited_s == 0.25  # it was waiting: a lateness would be the host's wake-up
    at.main(["vnetbench-at", "1000.000000", "true"])
    began, _ = split_began(capsys.readouterr().out)
    assert slept == [0.25] and began is not None and began.late_s == 0.25
    assert began.waited_s == 0.0  # it never waited: it started after the instant
    # a stamp from before waited_s was printed still reads, waited unknown
    old, _ = split_began("vnetbench-at began=10.5 late_s=0.5\n")
    assert old is not None and old.waited_s is None


def test_a_container_started_after_the_instant_begins_at_once_and_is_late() -> None:
    instant = time.time() - 1.5
    done = subprocess.run([sys.executable, str(AT), f"{instant:.6f}", "true"],
                          capture_output=True, text=True, check=False)
    began, _ = split_began(done.stdout)
    assert began is not None and began.late_s >= 1.5


def test_output_without_a_stamp_is_kept_whole() -> None:
    text = '{"error": "unable to connect to server"}\n'
    assert split_began(text) == (None, text)
    assert split_began("vnetbench-at began=x late_s=0\nrest") == (
        None, "vnetbench-at began=x late_s=0\nrest")
    assert at_instant(12.5, ["iperf3", "-c", "h"]) == [
        "vnetbench-at", "12.500000", "iperf3", "-c", "h"]


def test_a_probe_started_at_an_instant_is_labelled_with_its_tool() -> None:
    """Probes are found by their tool label (teardown tests, `docker ps` by a user): a
    client waiting in vnetbench-at is an iperf3 probe."""
    engine = Engine()
    run_probe(Run("run1", engine), "agent1",  # type: ignore[arg-type]
              at_instant(5.0, ["iperf3", "-c", "10.0.0.2"]), 4)
    assert engine.calls[0][1].labels["vnetbench.tool"] == "iperf3"
