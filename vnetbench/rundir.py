"""Run directories: their names, stamps and run ids, and where a run keeps its
files. Their run.json is vnetbench/runrecord.py's."""

from __future__ import annotations

import secrets
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from vnetbench.errors import UserError

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
