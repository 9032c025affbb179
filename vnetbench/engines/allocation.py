"""Claiming a run's /16 address block, safely when several runs start at once.

The choice and the claim happen under one inter-process lock (flock); the claim
is a file naming the run's owner, which other runs honour while that owner
lives, so a run keeps its block across stacks (a join's passes) even while it
has no network up. Blocks that overlap a Docker network or a host route are
skipped.
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from ipaddress import IPv4Network
from pathlib import Path
from types import FrameType
from typing import IO

from vnetbench.errors import EnvironmentProblem
from vnetbench.model.addressing import free_block
from vnetbench.runtime.labels import current_owner, owner_gone

STATE = Path(os.environ.get("VNETBENCH_STATE") or
             Path(tempfile.gettempdir()) / f"vnetbench-{os.getuid()}")
LOCK_WAIT_SECONDS = 120.0  # choosing a block takes a second; longer is a stuck holder


def private_state(path: Path = STATE) -> Path:
    """The state directory, made private (0700) if new; one that another user owns,
    or that others may write, is refused: in a shared /tmp it could be planted to
    hand this user's runs a block, or to block them on its lock."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    facts = path.lstat()
    link = path.is_symlink()
    if link or facts.st_uid != os.getuid() or facts.st_mode & 0o022:
        what = "a symbolic link" if link else f"mode {facts.st_mode & 0o777:o}"
        raise EnvironmentProblem(
            f"The state directory {path} is not this user's own private directory (owner "
            f"uid {facts.st_uid}, {what}). Remove it (vnetbench makes it again, mode 700), "
            "or set VNETBENCH_STATE to a directory of your own.")
    return path


class LockWaitTooLong(Exception):
    pass


def _too_long(signum: int, frame: FrameType | None) -> None:
    raise LockWaitTooLong


def wait_for_lock(lock: IO[str], timeout_s: float) -> None:
    """flock, waited for at most timeout_s: in the main thread the kernel's own wait,
    ended by an alarm (other processes see a waiter in /proc/locks); elsewhere, tries."""
    if threading.current_thread() is not threading.main_thread():
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise LockWaitTooLong from None
                time.sleep(0.05)
    previous = signal.signal(signal.SIGALRM, _too_long)
    signal.setitimer(signal.ITIMER_REAL, timeout_s)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextmanager
def state_lock(name: str, timeout_s: float = LOCK_WAIT_SECONDS) -> Iterator[None]:
    """An inter-process lock in the state directory, waited for at most timeout_s."""
    path = private_state() / name
    with path.open("a") as lock:
        try:
            wait_for_lock(lock, timeout_s)
        except LockWaitTooLong:
            raise EnvironmentProblem(
                f"Another vnetbench process has held {path} for over {timeout_s:.0f} s "
                f"(choosing an address block takes about a second). 'fuser -v {path}' names "
                "it: end it, then run again.") from None
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def docker_subnets() -> list[IPv4Network]:
    """The IPv4 subnets of this machine's engine's networks."""
    from vnetbench.engines import local

    return local().subnets()


def host_routes() -> list[IPv4Network]:
    """Destinations of this host's IPv4 routes (not the default route)."""
    try:
        out = subprocess.run(["ip", "-4", "route", "show", "table", "all"],
                             capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    routes = []
    for line in out.splitlines():
        first = line.split()[0] if line.split() else ""
        if first in ("broadcast", "local", "unicast") and len(line.split()) > 1:
            first = line.split()[1]
        if first[:1].isdigit():
            routes.append(IPv4Network(first if "/" in first else f"{first}/32", strict=False))
    return routes


def claimed_blocks(directory: Path) -> list[IPv4Network]:
    """Blocks claimed by runs whose owner still lives (stale claims are removed)."""
    claimed = []
    for claim in directory.glob("*.claim"):
        if owner_gone(claim.read_text().strip()):
            claim.unlink(missing_ok=True)
        else:
            claimed.append(IPv4Network(claim.stem.replace("_", "/")))
    return claimed


REPLACEMENT_CHOICES = 16  # after a refusal: one of the next 16 free blocks, at random


class BlockClaim:
    """A run's claim on one /16. `replace` moves it when the engine refuses the
    block anyway: an engine user that claims elsewhere (vnetbench with another
    state directory, another tool) created an overlapping network after the choice."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.refused: list[IPv4Network] = []
        self.file: Path | None = None
        self.block = self._claim()

    def _claim(self) -> IPv4Network:
        with state_lock("blocks.lock"):
            block = free_block(docker_subnets() + claimed_blocks(self.directory)
                               + host_routes() + self.refused,
                               among=REPLACEMENT_CHOICES if self.refused else 1)
            self.release()
            self.file = self.directory / f"{str(block).replace('/', '_')}.claim"
            self.file.write_text(current_owner())
            return block

    def replace(self) -> IPv4Network:
        """Give up the current block for the rest of the run and claim another."""
        self.refused.append(self.block)
        self.block = self._claim()
        return self.block

    def release(self) -> None:
        if self.file is not None:
            self.file.unlink(missing_ok=True)
            self.file = None


@contextmanager
def claimed_block() -> Iterator[BlockClaim]:
    """A /16 of the pool no one else uses or claims, held for the `with` block."""
    directory = private_state() / "blocks"
    directory.mkdir(mode=0o700, exist_ok=True)
    claim = BlockClaim(directory)
    try:
        yield claim
    finally:
        claim.release()
