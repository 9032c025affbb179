"""The backbone's edges and their helpers' staging: its lead, and the stand-ins the
executor's tests (test_executor.py) run a helper's own script with here: ip and
iptables, the tools image's real vnetbench-at and vnetbench-fault, an engine of local processes (no
engine, no privileges)."""

from __future__ import annotations

import os
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vnetbench.engines.base import EngineError, Listed, ToolOutput, ToolSpec
from vnetbench.faults.edges import staging_lead_s

TOOLS = Path(__file__).resolve().parents[3] / "images" / "tools"


def test_staging_starts_helpers_four_at_once_a_second_each_with_a_margin() -> None:
    assert staging_lead_s(2) == 2.0 and staging_lead_s(4) == 2.0
    assert staging_lead_s(5) == 3.0


def stand_ins(directory: Path, log: Path) -> dict[str, str]:
    """ip answering for one address, iptables logging its arguments with the time."""
    def script(name: str, body: str) -> None:
        path = directory / name
        path.write_text("#!/bin/sh\n" + body)
        path.chmod(path.stat().st_mode | stat.S_IEXEC)
    script("ip", "echo '2: eth1    inet 10.9.0.2/24 brd 10.9.0.255 scope global eth1'\n")
    script("iptables", f'echo "$(date +%s.%N) $*" >> {log}\n')
    for tool in ("vnetbench-at", "vnetbench-fault"):  # the tools image's own
        os.symlink(TOOLS / tool, directory / tool)
    return {**os.environ, "PATH": f"{directory}:/usr/bin:/bin"}


class LocalHelpers:
    """An engine that runs each helper here as a process (its target's address and
    behaviour in its environment): what the executor's
    staging and reading ask of an engine, nothing more."""

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


