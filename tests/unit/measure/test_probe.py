"""run_probe: the tool bounded by timeout(1), its output held in the probe until it ends."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from typing import Any

from vnetbench.engines.base import ToolOutput
from vnetbench.measure.probe import held, run_probe


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
    calls: list[tuple[str, list[str], dict[str, str]]] = field(default_factory=list)

    def run_tool(self, target: str, argv: list[str], labels: dict[str, str],
                 **options: Any) -> ToolOutput:
        self.calls.append((target, argv, labels))
        return ToolOutput(0, "out", "")


@dataclass
class Run:
    run_id: str
    engine: Engine


def test_run_probe_bounds_then_holds_the_tool() -> None:
    engine = Engine()
    output = run_probe(Run("run1", engine), "agent1", ["ping", "-c", "3", "10.0.0.2"], 4.2)  # type: ignore[arg-type]
    target, argv, labels = engine.calls[0]
    assert output.stdout == "out" and target == "agent1"
    assert argv == held(["timeout", "-k", "2", "5", "ping", "-c", "3", "10.0.0.2"])
    assert labels["vnetbench.tool"] == "ping"  # the tool, not the wrapper's shell
