"""Running a tool in a container that shares an agent's network namespace.

The probe is our own `tools` image joined to the target container's network
(`--network container:<name>`), so the system under test's image is never
modified. Every probe carries the run's label, so teardown removes it too.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass

from python_on_whales import Container, docker
from python_on_whales.exceptions import DockerException

from vnetbench.images import TOOLS_IMAGE
from vnetbench.labels import TOOL, run_labels


@dataclass(frozen=True)
class ProbeOutput:
    exit_code: int
    stdout: str
    stderr: str


def _labels(run_id: str, target: str, tool: str) -> dict[str, str]:
    return run_labels(run_id, "probe", target, **{TOOL: tool})


def run_probe(
    run_id: str, target: str, argv: list[str], timeout_seconds: float
) -> ProbeOutput:
    """Run argv to completion in target's namespace, bounded by timeout_seconds."""
    bounded = ["timeout", "-k", "2", f"{timeout_seconds:.0f}", *argv]
    try:
        stdout = docker.run(
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
    container = docker.run(
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
        docker.container.remove(container, force=True)


CONNECT_ATTEMPTS = 5


@contextmanager
def iperf_server(run_id: str, target: str, name: str) -> Iterator[None]:
    """A one-off iperf3 server in target's namespace, removed afterwards."""
    server = start_probe(run_id, target, ["iperf3", "-s", "-1"], name=name)
    try:
        yield
    finally:
        stop_probe(server)


def run_iperf_client(run_id: str, client: str, argv: list[str],
                     timeout_seconds: float) -> str:
    """iperf3's output, trying again while the new server does not listen yet."""
    output = ""
    for _ in range(CONNECT_ATTEMPTS):
        output = run_probe(run_id, client, argv, timeout_seconds).stdout
        if "Connection refused" not in output:
            break
        time.sleep(0.3)
    return output
