"""The engine's API (Docker SDK, docker-py) for the calls a run makes per container,
hundreds of times: a container's log, a command in it, a listing, and (on another
host, whose cgroup files this machine cannot read) its CPU and memory counters.

Through the CLI each of them forks `docker`, a Go program whose start alone costs
more than the engine's answer. Measured here on 40 sleeping containers, the calls
interleaved (2026-12-06, 2 cores): a log 44 ms of wall time and 48 ms of CPU
through the CLI, 4.9 ms and 3.9 ms through the API; an exec 92 and 26 ms against
70 and 4.6 ms; a listing 29 and 24 ms against 9.3 and 2.9 ms. A room of 300
machines reads 300 logs and makes 600 execs to read its counters: some 25 s of CPU
on a 2-core host that the measurement competes with.

Builds, compose, networks, volumes and removal stay on the CLI (python-on-whales):
few calls, each long. Every error here leaves as EngineError (api_calls), as the
CLI's do (docker.py engine_calls).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any

import docker
import docker.errors
import requests.exceptions

from vnetbench.engines.base import EngineError, Listed, ToolOutput
from vnetbench.engines.usage import MemoryReading, without_cache

# an ordinary call's bound and a quick one's, as the CLI's (docker.py)
CALL_SECONDS = 1800
QUICK_SECONDS = 60
MISSING_EXIT = 1  # the CLI's exit status for a container it cannot find


@cache
def api_client(endpoint: str | None, seconds: int) -> docker.APIClient:
    """One client per engine endpoint and bound, kept: its connections are pooled
    (None: this machine's engine, as DOCKER_HOST says). Made, it has asked the engine
    its API version once; an engine that does not answer is an EngineError (and
    nothing is kept)."""
    with api_calls():
        if endpoint is None:
            return docker.APIClient(timeout=seconds, **docker.utils.kwargs_from_env())
        return docker.APIClient(base_url=endpoint, timeout=seconds,
                                use_ssh_client=endpoint.startswith("ssh://"))


@contextmanager
def api_calls() -> Iterator[None]:
    """The SDK's and its transport's errors leave as EngineError."""
    try:
        yield
    except docker.errors.APIError as error:
        status = error.status_code or 0
        raise EngineError(f"the engine answered {status}: {error.explanation or error}",
                          MISSING_EXIT if status == 404 else 1, "",
                          str(error.explanation or "")) from error
    except (docker.errors.DockerException, requests.exceptions.RequestException) as error:
        raise EngineError(f"the engine's API: {error}", 1, "", str(error)) from error


def api_logs(api: docker.APIClient, container: str, since: datetime | None,
             timestamps: bool) -> str:
    """The container's stdout and stderr as they came (`docker logs`)."""
    with api_calls():
        found = api.logs(container, stdout=True, stderr=True, timestamps=timestamps,
                         since=since.timestamp() if since is not None else None)
    return found.decode(errors="replace") if isinstance(found, bytes) else str(found)


def api_execute(api: docker.APIClient, container: str, argv: Sequence[str]) -> ToolOutput:
    """A command in the container, to its end: its exit status and output (`docker
    exec`); a container that is not there is exit status 1 with the engine's words,
    as the CLI's."""
    try:
        with api_calls():
            created = api.exec_create(container, list(argv), stdout=True, stderr=True)
            out, err = api.exec_start(created["Id"], demux=True)
            code = api.exec_inspect(created["Id"]).get("ExitCode")
    except EngineError as error:
        return ToolOutput(error.exit_code or MISSING_EXIT, "", error.stderr or str(error))
    return ToolOutput(int(code or 0), (out or b"").decode(errors="replace"),
                      (err or b"").decode(errors="replace"))


def api_listed(api: docker.APIClient, filters: Sequence[tuple[str, str]], where: str,
               keys: Sequence[str]) -> list[Listed]:
    """Every container matching all `filters` (`docker ps --all --filter`), with the
    labels of `keys` it carries."""
    wanted: dict[str, list[str]] = {}
    for name, value in filters:
        wanted.setdefault(name, []).append(value)
    with api_calls():
        found = api.containers(all=True, filters=wanted)
    return [listed_of(raw, where, keys) for raw in found]


def listed_of(raw: Mapping[str, Any], where: str, keys: Sequence[str]) -> Listed:
    """One entry of the engine's container list in the interface's terms."""
    names = raw.get("Names") or [""]
    carried = raw.get("Labels") or {}
    return Listed(str(raw.get("Id", "")), str(names[0]).lstrip("/"), str(raw.get("State", "")),
                  health_of(str(raw.get("Status", ""))),
                  {k: carried[k] for k in keys if carried.get(k)}, where)


def health_of(status: str) -> str | None:
    """'Up 3 seconds (health: starting)' -> starting; '(healthy)' -> healthy."""
    for word in ("health: starting", "unhealthy", "healthy"):
        if f"({word})" in status:
            return word.removeprefix("health: ")
    return None


@dataclass(frozen=True)
class Usage:
    """A container's counters as its engine reads them (None: not given)."""

    cpu_seconds: float | None
    memory: MemoryReading | None


def api_usage(api: docker.APIClient, container: str) -> Usage:
    """The container's CPU seconds and memory from its own engine's stats (one sample,
    `one_shot`: no second reading a second later); a container gone is Usage(None,
    None). The engine reads the cgroup as usage.py does on this machine: memory less
    the inactive page cache, the peak only where cgroup v1 keeps it (max_usage)."""
    try:
        with api_calls():
            stats = api.stats(container, stream=False, one_shot=True)
    except EngineError:
        return Usage(None, None)
    return usage_of(stats)


def usage_of(stats: Mapping[str, Any]) -> Usage:
    """The counters of one stats document (a stopped container's are empty)."""
    total = (stats.get("cpu_stats") or {}).get("cpu_usage", {}).get("total_usage")
    memory = stats.get("memory_stats") or {}
    reading = None
    if isinstance(memory.get("usage"), int):
        fields = {k: v for k, v in (memory.get("stats") or {}).items() if isinstance(v, int)}
        key = "total_inactive_file" if "total_inactive_file" in fields else "inactive_file"
        peak = memory.get("max_usage")
        reading = MemoryReading(without_cache(memory["usage"], fields, key),
                                peak if isinstance(peak, int) else None)
    return Usage(total / 1e9 if isinstance(total, int) else None, reading)
