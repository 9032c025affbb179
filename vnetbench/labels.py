"""The labels every object of a run carries, and the filters that find them.

A container, network or volume of a run carries RUN (its run id); containers
also ROLE (conductor, switch, agent, router, hub, fabric, probe, shaper...)
and NODE (the topology's name for it), networks SEGMENT (site or backbone).
Teardown and `vnetbench clean` find everything by RUN, so they can neither
miss an object of a run nor touch one that is not vnetbench's. OWNER names the
vnetbench process that runs it (host:pid:start time), so a run whose process
is gone (killed, its terminal closed) is known as orphaned; `up` and hand-run
compose files are `detached`: left running on purpose.
"""

from __future__ import annotations

import os
import re
import socket
from pathlib import Path
from typing import Literal

RUN = "vnetbench.run"
ROLE = "vnetbench.role"
NODE = "vnetbench.node"
SEGMENT = "vnetbench.segment"
OVERLAY = "vnetbench.overlay"
TOOL = "vnetbench.tool"

# The system under test's roles (every other role is vnetbench's own helper).
SYSTEM_ROLES = ("conductor", "switch", "agent")

LabelFilter = tuple[Literal["label"], str]


def run_filter(run_id: str | None) -> list[LabelFilter]:
    """Objects of one run, or of every run when run_id is None."""
    return [("label", f"{RUN}={run_id}" if run_id else RUN)]


def role_filter(role: str) -> LabelFilter:
    return ("label", f"{ROLE}={role}")


def run_labels(run_id: str, role: str, node: str, **extra: str) -> dict[str, str]:
    """The labels of a container vnetbench starts itself (probes, shapers)."""
    return {RUN: run_id, ROLE: role, NODE: node, OWNER: current_owner(), **extra}


def names_for_templates() -> dict[str, str]:
    """The label keys, for the Jinja templates (`label.run`, `label.role`, ...)."""
    return {"run": RUN, "role": ROLE, "node": NODE, "segment": SEGMENT, "overlay": OVERLAY,
            "owner": OWNER}


OWNER = "vnetbench.owner"
DETACHED = "detached"  # owner of a topology left running on purpose (up, compose files)


def process_start(pid: int) -> str | None:
    """The kernel's start time of a process (clock ticks since boot), or None if it is
    gone: with the pid, it names the process even after the pid is reused."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return None if fields[0] in ("Z", "X") else fields[19]  # a zombie is gone too


def current_owner() -> str:
    """This vnetbench process, as the owner label of what it starts: host:pid:start."""
    pid = os.getpid()
    return f"{socket.gethostname()}:{pid}:{process_start(pid)}"


def detached_owner(how: str) -> str:
    return f"{DETACHED}:{how}"


def owner_gone(owner: str | None) -> bool:
    """True when the owner is a vnetbench process of this host that no longer runs (or
    the run has no owner label at all); a detached run or another host's is not gone."""
    if not owner:
        return True
    if owner.startswith(f"{DETACHED}:"):
        return False
    host, _, rest = owner.partition(":")
    pid, _, start = rest.partition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return False
    return process_start(int(pid)) != start


def all_gone(owners: set[str | None]) -> bool:
    """A run is orphaned only when every owner its objects name is gone: not when one
    helper names a process that has ended while the run's own record (its networks,
    rendered with `detached:` for `up`) says it was left up on purpose."""
    named = {owner for owner in owners if owner}
    return not named or all(owner_gone(owner) for owner in named)


FABRIC_SERVICE = "fabric"  # templates/compose.yml.j2; on a swarm one per node, fabric-NODE


def project_name(run_id: str) -> str:
    """Compose project names allow lower-case letters, digits, '-' and '_'."""
    return re.sub(r"[^a-z0-9_-]", "-", run_id.lower())
