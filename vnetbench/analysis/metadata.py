"""Facts about the machine and engine, for a results file that explains itself."""

from __future__ import annotations

import os
import platform
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vnetbench import __version__
from vnetbench.engines import EngineError, HostRuntime, local

if TYPE_CHECKING:
    pass

def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def memory_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    return None


def engine_facts(runtime: HostRuntime) -> dict[str, Any]:
    try:
        return runtime.system_facts()
    except EngineError as error:
        return {"error": str(error)}


def machine_facts() -> dict[str, Any]:
    return {
        "hostname": platform.node(),
        "cpu_model": cpu_model(),
        "cores": os.cpu_count(),
        "memory_gib": memory_gib(),
        "kernel": platform.release(),
        "os": platform.freedesktop_os_release().get("PRETTY_NAME", "")
        if hasattr(platform, "freedesktop_os_release") else "",
        "python": platform.python_version(),
        "vnetbench_version": __version__,
    }


def host_facts(tools_image: str) -> dict[str, Any]:
    """The machine, engine and image facts every results header carries."""
    runtime = local()
    return {"machine": machine_facts(), "engine": engine_facts(runtime),
            "images": {"tools": {"name": tools_image, "id": runtime.image_id(tools_image)}}}
