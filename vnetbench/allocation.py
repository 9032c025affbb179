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
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from ipaddress import IPv4Network
from pathlib import Path

from vnetbench.addressing import free_block
from vnetbench.engine import quick
from vnetbench.labels import current_owner, owner_gone

STATE = Path(os.environ.get("VNETBENCH_STATE") or
             Path(tempfile.gettempdir()) / f"vnetbench-{os.getuid()}")


def docker_subnets() -> list[IPv4Network]:
    subnets = []
    for network in quick.network.list():
        for config in network.ipam.config or []:
            subnet = config.get("Subnet") or config.get("subnet")
            if subnet and ":" not in subnet:
                subnets.append(IPv4Network(subnet))
    return subnets


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
        with (STATE / "blocks.lock").open("a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                block = free_block(docker_subnets() + claimed_blocks(self.directory)
                                   + host_routes() + self.refused)
                self.release()
                self.file = self.directory / f"{str(block).replace('/', '_')}.claim"
                self.file.write_text(current_owner())
                return block
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

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
    directory = STATE / "blocks"
    directory.mkdir(parents=True, exist_ok=True)
    claim = BlockClaim(directory)
    try:
        yield claim
    finally:
        claim.release()
