"""`vnetbench doctor`: is this machine ready, and what is missing?"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from vnetbench.core.model import Model
from vnetbench.engines import HostRuntime
from vnetbench.engines.facts import EngineFacts
from vnetbench.runtime.host_limits import (
    INOTIFY_HEADROOM,
    NEIGHBOUR_HEADROOM,
    RAISED_INOTIFY,
    RAISED_NEIGHBOURS,
    inotify_limit,
    neighbour_limit,
)
from vnetbench.runtime.images import TOOLS_IMAGE

REQUIRED = ("docker engine", "compose v2", "tools image")  # the verdict's; the rest inform


class Check(Model):
    """One thing the testbed needs of this machine, and what was found."""

    name: str
    ok: bool
    detail: str
    required: bool = Field(description="the verdict depends on it (the others say what "
                           "a scenario or overlay will lack)")


class Diagnosis(Model):
    """Every check, and the verdict: ready when every required check passed."""

    checks: list[Check]

    @property
    def ready(self) -> bool:
        found = {check.name for check in self.checks}
        return set(REQUIRED) <= found and all(c.ok for c in self.checks if c.required)


def diagnosis(found: list[tuple[str, bool, str]]) -> Diagnosis:
    """(check, ok, detail) as the checks and the overlays' describe() give them."""
    return Diagnosis(checks=[Check(name=name, ok=ok, detail=detail, required=name in REQUIRED)
                             for name, ok, detail in found])


def diagnose(runtime: HostRuntime) -> Diagnosis:
    versions = runtime.versions()
    engine, compose = versions.engine, versions.compose
    checks: list[tuple[str, bool, str]] = [
        ("docker engine", engine is not None, engine or "does not answer: run 'make setup'"),
        ("health checks only while starting", EngineFacts(engine).start_interval,
         "yes (start_interval)" if EngineFacts(engine).start_interval else
         f"no: Engine {engine} has no start_interval, so health checks run every second "
         "while vnetbench measures; use Engine 25 or later (make setup installs 26)"),
        ("compose v2", compose is not None, compose or "missing: install the Compose v2 plugin"),
        ("/dev/net/tun", Path("/dev/net/tun").exists(), "needed by overlays with TUN devices"),
        inotify_check(),
        neighbour_check(),
    ]
    if engine is None:
        return diagnosis(checks)
    tools = runtime.image_id(TOOLS_IMAGE)
    checks.append(("tools image", tools is not None,
                   tools[:19] if tools else "missing: run 'vnetbench images build'"))
    if tools:
        from vnetbench.shaping.capabilities import detect_capabilities

        for capability in detect_capabilities(runtime):
            detail = capability.purpose
            if not capability.available:
                detail += f" — kernel says: {capability.answer}"
            checks.append((f"kernel: {capability.name}", capability.available, detail))
        from vnetbench.overlays import OVERLAY_TYPES

        for overlay_type in OVERLAY_TYPES.values():
            checks.extend(overlay_type().describe())
    return diagnosis(checks)


def inotify_check() -> tuple[str, bool, str]:
    """The inotify instances every container shares (runtime/host_limits.py)."""
    limit = inotify_limit()
    return limit_check("inotify instances", limit, RAISED_INOTIFY,
                       f"{limit} per user, shared by every container",
                       "each wireguard-go takes one, so a WireGuard stack of more than "
                       f"about {(limit or 0) - INOTIFY_HEADROOM} agents and switches is refused")


def neighbour_check() -> tuple[str, bool, str]:
    """The ARP table every container shares (runtime/host_limits.py)."""
    limit = neighbour_limit()
    return limit_check("ARP table", limit, RAISED_NEIGHBOURS,
                       f"{limit} entries, one table for every container",
                       f"a stack of more than about {((limit or 0) - NEIGHBOUR_HEADROOM) // 2} "
                       "agents and switches is refused")


def limit_check(name: str, limit: int | None, raised: int, found: str,
                refused: str) -> tuple[str, bool, str]:
    """A kernel limit every container shares: unknown when it cannot be read; below
    what `make setup` sets, what it refuses."""
    if limit is None:
        return (name, True, "unknown (the limit cannot be read)")
    enough = limit >= raised
    return (name, enough, found + ("" if enough else
                                   f": {refused}; 'make setup' as root raises it"))
