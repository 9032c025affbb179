"""Run directories: their names, stamps and run ids, where a run keeps its files,
and the marker that proves vnetbench made one. Their run.json is
vnetbench/analysis/runrecord.py's.

Every run directory gets its marker (RUN_MARKER: its name and owner) the moment it
is made, before anything else is written in it: `vnetbench clean` removes files
only inside a directory so marked, never one it finds by its name or content
elsewhere (a user's SSH key under the --results it is given stays)."""

from __future__ import annotations

import json
import os
import secrets
import stat
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from vnetbench.errors import UserError
from vnetbench.files import write_text_atomic
from vnetbench.runtime.labels import current_owner

STAMP_FORMAT = "%Y%m%d-%H%M%S"


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
    in the same second: mkdir without exist_ok is the lock, a suffix the retry; marked
    as vnetbench's."""
    root.mkdir(parents=True, exist_ok=True)
    for suffix in range(1, 1000):
        candidate = root / (name if suffix == 1 else f"{name}-{suffix}")
        try:
            candidate.mkdir()
        except FileExistsError:
            continue
        mark_run_directory(candidate)
        return candidate
    raise UserError(f"{root} already holds 999 directories named {name}-N: clean it up.")


RUN_MARKER = ".vnetbench-run"  # in each run directory, written as it is made
MARKER_KIND = "vnetbench run directory"
MARKER_LIMIT = 4096  # bytes: a marker is one short JSON line


@dataclass(frozen=True)
class RunMarker:
    """What a run directory's marker records: the directory's name when it was made
    (the run id, for `up`) and the vnetbench process that made it (labels.py)."""

    name: str
    owner: str


def mark_run_directory(directory: Path, owner: str | None = None) -> None:
    """The proof that vnetbench made this directory (written whole, as it is made), with
    its owner: this process, unless told."""
    write_text_atomic(directory / RUN_MARKER, json.dumps({
        "kind": MARKER_KIND, "name": directory.name, "owner": owner or current_owner(),
        "made": datetime.now(UTC).isoformat(timespec="seconds")}) + "\n")


def run_marker(directory: Path) -> RunMarker | None:
    """The directory's marker, if it has one vnetbench wrote for it: a regular file (a
    link is none), vnetbench's JSON, naming this directory."""
    path = directory / RUN_MARKER
    try:
        info = path.lstat()
        if not stat.S_ISREG(info.st_mode) or info.st_size > MARKER_LIMIT:
            return None
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("kind") != MARKER_KIND:
        return None
    name, owner = data.get("name"), data.get("owner")
    if name != directory.name or not isinstance(owner, str):
        return None
    return RunMarker(name, owner)


def marked_run_directories(root: Path) -> list[Path]:
    """The run directories under root (root too) that vnetbench marked as it made them,
    links not followed; not those inside one found (its subtree is its own)."""
    found: list[Path] = []
    for directory, subdirs, _ in os.walk(root):
        if run_marker(Path(directory)) is not None:
            found.append(Path(directory))
            subdirs.clear()
        subdirs.sort()
    return found


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
