"""A run directory and its run.json: one owner for the layout, the file's name,
its schema (versioned) and its reading and writing.

Every kind of results directory (a single run, a matrix, a sweep, a comparison)
has one run.json with the same keys: `format_version`, `kind`, `started`,
`ended`, `status`, the machine/engine/image facts, `overlays` (name -> version
and data path) and what the kind adds (a single run: run_id, scenarios,
address block, networks, topology, links; a matrix: its cells).

run.json, like every file a user keeps, is written whole or not at all, with the
umask's mode (vnetbench/files.py).
"""

from __future__ import annotations

import json
import secrets
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, ValidationError

from vnetbench.errors import UserError
from vnetbench.files import write_atomic as write_atomic
from vnetbench.files import write_text_atomic

if TYPE_CHECKING:
    from vnetbench.overlays import Overlay
    from vnetbench.topology import Topology

RUN_FILE = "run.json"
FORMAT_VERSION = 2  # 2: `overlays` in every kind (1: a single run had `overlay`)
STAMP_FORMAT = "%Y%m%d-%H%M%S"


# run.json `timings`: each stack's seconds: bring-up, what join spends around each
# release (programs restarted between passes, waits for a quiet host), measurement,
# teardown
TIMING_PARTS = ("bring_up_s", "restart_s", "measure_s", "teardown_s")


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def stamp(now: datetime | None = None) -> str:
    """The UTC time in run ids and directory names: 20261130-054833."""
    return (now or datetime.now(UTC)).strftime(STAMP_FORMAT)


RUN_ID_ENTROPY_BYTES = 8  # 64 random bits: runs started in one second never meet


def new_run_id(name: str) -> str:
    """name-stamp-random: the stamp sorts runs, the random part (64 bits; it was 16, so
    two runs of one second could share an id and each other's objects) tells them apart."""
    return f"{name}-{stamp()}-{secrets.token_hex(RUN_ID_ENTROPY_BYTES)}"


def writable_directory(path: Path, option: str) -> Path:
    """The results directory a command was given, made and checked before anything starts."""
    problem = None
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".vnetbench-write-test"):
            pass
    except FileExistsError:
        problem = "it names a file, not a directory"
    except OSError as error:
        problem = error.strerror or str(error)
    if problem:
        raise UserError(f"{option} {path}: vnetbench cannot write results there ({problem}). "
                        f"Give {option} a directory you can write to.")
    return path


def new_directory(root: Path, name: str) -> Path:
    """A directory of its own under root, even when another run picks the same name
    in the same second: mkdir without exist_ok is the lock, a suffix the retry."""
    root.mkdir(parents=True, exist_ok=True)
    for suffix in range(1, 1000):
        candidate = root / (name if suffix == 1 else f"{name}-{suffix}")
        try:
            candidate.mkdir()
            return candidate
        except FileExistsError:
            continue
    raise UserError(f"{root} already holds 999 directories named {name}-N: clean it up.")


def slug(text: str) -> str:
    """'MTU 1400, encrypted' -> 'mtu-1400-encrypted' (a step's folder and file names)."""
    return "-".join("".join(c if c.isalnum() else " " for c in text.lower()).split())


@dataclass(frozen=True)
class RunLayout:
    """Where a single run keeps each scenario's stack files, raw output and logs."""

    root: Path

    def scenario(self, name: str) -> Path:
        return self.root / name

    def raw(self, scenario: str) -> Path:
        return self.root / scenario / "raw"

    def logs(self, scenario: str, pass_no: int | None = None) -> Path:
        logs = self.root / scenario / "logs"
        return logs / f"pass{pass_no}" if pass_no is not None else logs


def overlay_facts(overlays: Iterable[Overlay]) -> dict[str, dict[str, str]]:
    return {o.name: {"data_path": o.data_path, "version": o.version()} for o in overlays}


def new_header(kind: str, overlays: Iterable[Overlay], **fields: Any) -> dict[str, Any]:
    """run.json's common part for any kind of directory, plus the kind's own fields."""
    from vnetbench.images import TOOLS_IMAGE
    from vnetbench.metadata import host_facts

    return {"format_version": FORMAT_VERSION, "kind": kind, "started": now_iso(),
            "ended": None, "status": "running", **host_facts(TOOLS_IMAGE),
            "overlays": overlay_facts(overlays), **fields}


def upgrade(data: dict[str, Any]) -> dict[str, Any]:
    """A run.json of an older format in today's schema."""
    if "overlays" not in data and isinstance(data.get("overlay"), dict):
        overlay = dict(data["overlay"])
        data = {**data, "overlays": {overlay.pop("name", "?"): overlay}}
    data.setdefault("kind", "run" if "run_id" in data else "results")
    return data


class HeaderShape(BaseModel):
    """The types of the run.json entries readers take apart (a report, compare, history,
    export): one of another type is a foreign or damaged file, refused by name instead
    of met as a traceback deep in a report. Entries not named here are not checked."""

    model_config = ConfigDict(extra="allow")

    kind: str | None = None
    started: str | None = None
    ended: str | None = None
    machine: dict[str, Any] | None = None
    engine: dict[str, Any] | None = None
    images: dict[str, Any] | None = None
    overlays: dict[str, dict[str, Any]] | None = None
    cells: dict[str, Any] | None = None
    arms: dict[str, dict[str, Any]] | None = None
    verdicts: dict[str, int] | None = None
    schedule: list[dict[str, Any]] | None = None
    outside_load: dict[str, dict[str, Any]] | None = None


def read_header(directory: Path) -> dict[str, Any]:
    """run.json of a directory ({} when there is none); a damaged one is a UserError."""
    path = directory / RUN_FILE
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise UserError(f"{path} cannot be read ({error}). It is written whole or not at all, "
                        "so something else changed it: restore it or remove it.") from None
    if not isinstance(data, dict):
        raise UserError(f"{path} is not a run.json (not a JSON object). Give a results "
                        "directory vnetbench wrote, or restore the file.")
    data = upgrade(data)
    try:
        HeaderShape.model_validate(data)
    except ValidationError as error:
        wrong = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg'].lower()}"
                          for e in error.errors()[:3])
        raise UserError(f"{path} is not a run.json vnetbench wrote ({wrong}). Something else "
                        "changed it, or it belongs to another tool: restore it from a copy, "
                        "or remove it (the results beside it are read without it).") from None
    return data


def save_header(directory: Path, header: dict[str, Any]) -> None:
    write_text_atomic(directory / RUN_FILE, json.dumps(header, indent=2, default=str) + "\n")


def recorded_topology(directory: Path, header: dict[str, Any]) -> Topology | None:
    """The topology a run.json holds (a run `up` left running); None without one."""
    from vnetbench.topology import parse_topology

    if "topology" not in header:
        return None
    return parse_topology(header["topology"], str(directory / RUN_FILE))


def record_shaping(directory: Path, header: dict[str, Any], topology: Topology,
                   applied: dict[str, Any]) -> None:
    """run.json once `shape` changed a running topology: the topology now in force and
    the shaping the kernel reports."""
    header["topology"] = topology.model_dump(mode="json")
    header.setdefault("links", {})["applied"] = {"shape": applied}
    save_header(directory, header)


@contextmanager
def recorded(directory: Path, header: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Save run.json now and again at the end with how it ended (completed,
    interrupted, failed: why), whatever happens in between."""
    save_header(directory, header)
    try:
        yield header
        header["status"] = "completed"
    except KeyboardInterrupt as interrupt:
        header["status"] = f"interrupted ({str(interrupt) or 'Ctrl-C'})"
        raise
    except Exception as error:
        header["status"] = f"failed: {error}"
        raise
    finally:
        header["ended"] = now_iso()
        save_header(directory, header)
