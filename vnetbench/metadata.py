"""Facts about the machine and engine, for a results file that explains itself."""

from __future__ import annotations

import json
import os
import platform
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from python_on_whales import docker
from python_on_whales.exceptions import DockerException

from vnetbench import __version__

if TYPE_CHECKING:
    from vnetbench.overlays import Overlay

FORMAT_VERSION = 1
HEADER_FILE = "run.json"


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


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


def engine_facts() -> dict[str, Any]:
    from vnetbench.engine import compose_version

    try:
        info = docker.system.info()
    except DockerException as error:
        return {"error": str(error)}
    return {
        "server_version": info.server_version,
        "storage_driver": getattr(info, "driver", None),
        "cgroup_driver": getattr(info, "cgroup_driver", None),
        "kernel": getattr(info, "kernel_version", None),
        "compose_version": compose_version(),
    }


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
    from vnetbench.images import image_id

    return {"machine": machine_facts(), "engine": engine_facts(),
            "images": {"tools": {"name": tools_image, "id": image_id(tools_image)}}}


def results_header(kind: str, overlays: list[Overlay]) -> dict[str, Any]:
    """The header of a directory holding several runs (matrix, sweep, compare)."""
    from vnetbench.images import TOOLS_IMAGE

    return {"format_version": FORMAT_VERSION, "kind": kind, "started": now_iso(),
            "ended": None, **host_facts(TOOLS_IMAGE),
            "overlays": {o.name: {"data_path": o.data_path, "version": o.version()}
                         for o in overlays}}


def load_header(directory: Path) -> dict[str, Any]:
    path = directory / HEADER_FILE
    return dict(json.loads(path.read_text())) if path.exists() else {}


def save_header(directory: Path, header: dict[str, Any]) -> None:
    (directory / HEADER_FILE).write_text(json.dumps(header, indent=2, default=str) + "\n")
