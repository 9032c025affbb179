"""`vnetbench doctor`: is this machine ready, and what is missing?"""

from __future__ import annotations

from pathlib import Path

from vnetbench.engines import HostRuntime
from vnetbench.engines.facts import EngineFacts
from vnetbench.runtime.images import TOOLS_IMAGE

Check = tuple[str, bool, str]


def diagnose(runtime: HostRuntime) -> tuple[list[Check], bool]:
    versions = runtime.versions()
    engine, compose = versions.engine, versions.compose
    checks: list[Check] = [
        ("docker engine", engine is not None, engine or "does not answer: run 'make setup'"),
        ("health checks only while starting", EngineFacts(engine).start_interval,
         "yes (start_interval)" if EngineFacts(engine).start_interval else
         f"no: Engine {engine} has no start_interval, so health checks run every second "
         "while vnetbench measures; use Engine 25 or later (make setup installs 26)"),
        ("compose v2", compose is not None, compose or "missing: install the Compose v2 plugin"),
        ("/dev/net/tun", Path("/dev/net/tun").exists(), "needed by overlays with TUN devices"),
    ]
    if engine is None:
        return checks, False
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
    required = {"docker engine", "compose v2", "tools image"}
    ready = all(ok for name, ok, _ in checks if name in required)
    return checks, ready
