"""This machine's per-user kernel limits that the containers share, checked before a
stack starts: every container runs as the host's root (no user namespace), so each
limit counts all of them together.

fs.inotify.max_user_instances (128 on Debian) bounds the inotify instances of one
user; wireguard-go takes one per process for its control socket, and the 129th fails
to start ("Failed to listen on uapi socket: too many open files"): a 300-machine
WireGuard room on this host lost 178 of its machines to it (2026-12-06). kind and
containerlab give the same fix: raise the limit (`make setup` does).
"""

from __future__ import annotations

import os
from pathlib import Path

from vnetbench.errors import EnvironmentProblem

INOTIFY_LIMIT = Path("/proc/sys/fs/inotify/max_user_instances")
INOTIFY_HEADROOM = 16  # the engine's own and the host's daemons, started meanwhile
RAISED_INOTIFY = 8192  # what `make setup` (scripts/ensure-docker) sets when lower


def inotify_limit() -> int | None:
    """fs.inotify.max_user_instances, or None where it cannot be read."""
    try:
        return int(INOTIFY_LIMIT.read_text().strip())
    except (OSError, ValueError):
        return None


def inotify_in_use(proc: Path = Path("/proc")) -> int:
    """inotify instances open on this machine now, by any process (root's and others':
    an upper bound of root's own)."""
    count = 0
    for pid in (p for p in proc.iterdir() if p.name.isdigit()):
        try:
            fds = list((pid / "fd").iterdir())
        except OSError:
            continue
        for fd in fds:
            try:
                count += os.readlink(fd) == "anon_inode:inotify"
            except OSError:
                continue
    return count


def require_inotify(needed: int, who: str) -> None:
    """EnvironmentProblem (exit 3) when `needed` more instances do not fit under the
    limit beside those in use and a headroom; nothing when the limit cannot be read."""
    limit = inotify_limit()
    if limit is None or needed == 0:
        return
    in_use = inotify_in_use()
    free = limit - in_use - INOTIFY_HEADROOM
    if needed <= free:
        return
    raise EnvironmentProblem(
        f"This machine allows {limit} inotify instances per user "
        f"(fs.inotify.max_user_instances), shared by every container, and {in_use} are in "
        f"use; {who} need {needed} more, so about {needed - max(free, 0)} of them would not "
        "start (\"too many open files\" in their logs). Raise the limit, as root: sysctl -w "
        f"fs.inotify.max_user_instances={RAISED_INOTIFY} (`make setup` does), or run fewer "
        f"machines (about {max(free, 0)} fit).")
