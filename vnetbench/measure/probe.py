"""Running a tool in a container that shares an agent's network namespace.

The probe is our own `tools` image joined to the target container's network
(`--network container:<name>`), so the system under test's image is never
modified. Every probe carries the run's label, so teardown removes it too.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from python_on_whales import Container
from python_on_whales.exceptions import DockerException

from vnetbench.engine import engines
from vnetbench.images import TOOLS_IMAGE
from vnetbench.labels import TOOL, run_labels


@dataclass(frozen=True)
class ProbeOutput:
    exit_code: int
    stdout: str
    stderr: str


def _labels(run_id: str, target: str, tool: str) -> dict[str, str]:
    return run_labels(run_id, "probe", target, **{TOOL: tool})


def timeout_argument(seconds: float) -> str:
    """timeout(1)'s duration, whole seconds rounded up: rounded to the nearest, a bound
    under half a second would read 0, which to timeout(1) means no bound at all."""
    return str(max(1, math.ceil(seconds)))


def run_probe(
    run_id: str, target: str, argv: list[str], timeout_seconds: float
) -> ProbeOutput:
    """Run argv to completion in target's namespace, bounded by timeout_seconds."""
    bounded = ["timeout", "-k", "2", timeout_argument(timeout_seconds), *argv]
    try:
        stdout = engines.client_for(target).run(
            TOOLS_IMAGE,
            bounded,
            networks=[f"container:{target}"],
            labels=_labels(run_id, target, argv[0]),
            remove=True,
            pull="never",
        )
        return ProbeOutput(0, str(stdout), "")
    except DockerException as error:
        return ProbeOutput(error.return_code, error.stdout or "", error.stderr or "")


def start_probe(run_id: str, target: str, argv: list[str], name: str) -> Container:
    """Start a long-running tool (e.g. an iperf3 server) in target's namespace."""
    container = engines.client_for(target).run(
        TOOLS_IMAGE,
        argv,
        name=name,
        networks=[f"container:{target}"],
        labels=_labels(run_id, target, argv[0]),
        detach=True,
        remove=True,
        pull="never",
    )
    assert isinstance(container, Container)
    return container


def stop_probe(container: Container) -> None:
    with suppress(DockerException):  # already gone: a one-off server that exited
        container.remove(force=True)


T = TypeVar("T")


@dataclass(frozen=True)
class ToolRun(Generic[T]):
    """One run of a tool: its raw output, and its parsed result or why there is none."""

    raw: str
    result: T | None
    error: str | None


def parsed(raw: str, parse: Callable[[str], T], failure: type[Exception]) -> ToolRun[T]:
    """raw through its parser; the parser's own `failure` becomes the run's error text."""
    try:
        return ToolRun(raw, parse(raw), None)
    except failure as error:
        return ToolRun(raw, None, str(error))


def save_raw(path: Path, text: str) -> None:
    """Keep a tool's raw output (the run's raw directory), creating the directory."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
