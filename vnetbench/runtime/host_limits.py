"""This machine's per-user kernel limits that the containers share, checked before a
stack starts: every container runs as the host's root (no user namespace), so each
limit counts all of them together.

fs.inotify.max_user_instances (128 on Debian) bounds the inotify instances of one
user; wireguard-go takes one per process for its control socket, and the 129th fails
to start ("Failed to listen on uapi socket: too many open files"): a 300-machine
WireGuard room on this host lost 178 of its machines to it (2026-12-06). kind and
containerlab give the same fix: raise the limit (`make setup` does).

net.ipv4.neigh.default.gc_thresh3 (1024) bounds the kernel's ARP table, and that table
is one for the whole machine: every network namespace's entries count against it (the
thresholds exist only in the host's namespace). Past it the kernel forces a
collection on each new entry and refuses entries it cannot free: connections fail
with EHOSTUNREACH or time out. A 1000-machine venue on the baseline (each machine
holding its gateway, each switch its machines: about 2,000 entries) lost a third of its
requests that way (2026-12-07: 113,993 forced collections, `ip -s ntable`). Large
Kubernetes clusters raise it for the same reason (`make setup` does).
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


NEIGHBOUR_LIMIT = Path("/proc/sys/net/ipv4/neigh/default/gc_thresh3")
NEIGHBOUR_HEADROOM = 128  # the host's own entries, and a switch's for its peers' overlays
RAISED_NEIGHBOURS = 65536  # what `make setup` sets gc_thresh3 to when lower


def neighbour_limit() -> int | None:
    """net.ipv4.neigh.default.gc_thresh3, or None where it cannot be read (another
    namespace than the host's has no such file)."""
    try:
        return int(NEIGHBOUR_LIMIT.read_text().strip())
    except (OSError, ValueError):
        return None


def neighbours_needed(containers: int, switches: int) -> int:
    """ARP entries a stack holds at most at once on the routed path: each container
    its gateway's, each gateway its containers', and the switches each other's on
    the backbone."""
    return 2 * containers + switches * switches


def require_neighbours(needed: int, who: str) -> None:
    """EnvironmentProblem (exit 3) when `needed` ARP entries do not fit under the
    machine's table beside a headroom; nothing when the limit cannot be read."""
    limit = neighbour_limit()
    if limit is None or needed + NEIGHBOUR_HEADROOM <= limit:
        return
    raise EnvironmentProblem(
        f"This machine's ARP table holds {limit} entries (net.ipv4.neigh.default."
        f"gc_thresh3), one table for every container together; {who} need about {needed}, "
        "and past the limit the kernel refuses new entries: connections fail ('no route "
        "to host') or time out, and a run would measure that. Raise it, as root: sysctl "
        f"-w net.ipv4.neigh.default.gc_thresh3={RAISED_NEIGHBOURS} (and gc_thresh2 "
        f"{RAISED_NEIGHBOURS // 2}; `make setup` does both), or run fewer machines (about "
        f"{max(0, (limit - NEIGHBOUR_HEADROOM) // 2)} containers fit).")
