"""The labels every object of a run carries, and the filters that find them.

A container, network or volume of a run carries RUN (its run id); containers
also ROLE (conductor, switch, agent, router, hub, fabric, probe, shaper...)
and NODE (the topology's name for it), networks SEGMENT (site or backbone).
Teardown and `vnetbench clean` find everything by RUN, so they can neither
miss an object of a run nor touch one that is not vnetbench's. OWNER names the
vnetbench process that runs it (host:pid:start time:PID namespace), so a run
whose process is gone (killed, its terminal closed) is known as orphaned; `up`
and hand-run compose files are `detached`: left running on purpose. A pid means
something only in its PID namespace: an owner in another one (vnetbench in a
container sharing the host's name) is never looked up here, so never gone.
"""

from __future__ import annotations

import os
import re
import secrets
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
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


def helper_labels(role: str, node: str) -> dict[str, str]:
    """The labels of a helper that belongs to no run (a probe of the kernel, a sweep of
    the host's rules, a look into an image): a run id of its own, so that one left
    behind by a killed process is found, and removed, by `clean` like a run's."""
    return run_labels(f"{HELPER_PREFIX}{role}-{secrets.token_hex(6)}", role, node)


HELPER_PREFIX = "helper-"


def owned(object_labels: Mapping[str, str]) -> bool:
    """Does an object about to be created carry a run and an owner? (Every object
    vnetbench creates must: teardown and `clean` find objects by label only.)"""
    return bool(object_labels.get(RUN)) and bool(object_labels.get(OWNER))


class UnlabelledObject(ValueError):
    """A bug: vnetbench was about to create an object without its run and owner labels."""


def require_owned(object_labels: Mapping[str, str] | None, what: str) -> dict[str, str]:
    """The labels, checked: UnlabelledObject when the run or the owner is missing."""
    if not object_labels or not owned(object_labels):
        raise UnlabelledObject(f"{what} would be created without the labels {RUN} and "
                               f"{OWNER} (it has {dict(object_labels or {})}): teardown and "
                               "'vnetbench clean' could not find it")
    return dict(object_labels)


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


def pid_namespace() -> str:
    """This process's PID namespace (the inode of /proc/self/ns/pid), "" if unknown."""
    try:
        return str(os.stat("/proc/self/ns/pid").st_ino)
    except OSError:
        return ""


def current_owner() -> str:
    """This vnetbench process, as the owner label of what it starts:
    host:pid:start:pidns."""
    pid = os.getpid()
    return f"{socket.gethostname()}:{pid}:{process_start(pid)}:{pid_namespace()}"


def detached_owner(how: str) -> str:
    return f"{DETACHED}:{how}"


class Liveness(Enum):
    """What this process can tell of an owner."""

    ALIVE = "alive"
    GONE = "gone"
    DETACHED = "detached"  # left running on purpose
    UNPROVABLE = "unprovable"  # another host's or another PID namespace's: kept


@dataclass(frozen=True)
class Owner:
    """An owner label read back: host:pid:start[:pidns] (labels before the PID
    namespace was recorded have three fields)."""

    host: str
    pid: int
    start: str
    pid_namespace: str | None

    @classmethod
    def parse(cls, owner: str) -> Owner | None:
        host, pid, start, *rest = [*owner.split(":"), "", ""][:4]
        if not pid.isdigit():
            return None
        return cls(host, int(pid), start, rest[0] if owner.count(":") >= 3 else None)


def owner_liveness(owner: str | None) -> Liveness:
    """Whether the owner is gone, as far as this process can prove it: only a process
    of this host and this PID namespace is looked up (or an owner with no label)."""
    if not owner:
        return Liveness.GONE
    if owner.startswith(f"{DETACHED}:"):
        return Liveness.DETACHED
    parsed = Owner.parse(owner)
    if parsed is None or parsed.host != socket.gethostname():
        return Liveness.UNPROVABLE
    if parsed.pid_namespace is not None and parsed.pid_namespace != pid_namespace():
        return Liveness.UNPROVABLE
    return Liveness.GONE if process_start(parsed.pid) != parsed.start else Liveness.ALIVE


def owner_gone(owner: str | None) -> bool:
    """True when the owner is a vnetbench process of this host and PID namespace that
    no longer runs (or the run has no owner label at all); a detached run, another
    host's or another PID namespace's is not gone."""
    return owner_liveness(owner) is Liveness.GONE


def unprovable(owners: set[str | None]) -> bool:
    """A run kept only because an owner of it cannot be looked up from here."""
    return any(owner_liveness(owner) is Liveness.UNPROVABLE for owner in owners if owner)


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
