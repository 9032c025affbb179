"""The start gate: containers created and waiting, released at one instant.

Measured on this kind of machine (issue #3): a named pipe read by every
waiting container released 100 containers within 22 ms at almost no CPU,
where polling loops saturated both cores, inotify ran out of instances and
`docker compose start` started containers one by one (~93 ms each). So each
gated container opens the pipe for reading (which blocks) through the
read-only entry wrapper `vnetbench-entry`; vnetbench opens it for writing,
which wakes them all, holds it open briefly for any container still between
its "waiting" mark and its open(), then closes it.

Join passes share one bring-up (issue #13): in a gated stack the wrapper
supervises every program of the system under test (`supervise`). Between
passes vnetbench sends SIGUSR1 to the agents, which stop their programs and
wait at the gate again, then to the conductor and switches, which start theirs
again; each start leaves a mark in the gate's `marks` directory, which
vnetbench reads without an engine call.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vnetbench.runtime import labels
from vnetbench.runtime.paths import PACKAGE

ENTRY_SOURCE = PACKAGE / "data" / "vnetbench-entry"
GATE_DIR = "gate"
FIFO_NAME = "release"
MOUNT_POINT = "/vnetbench"  # where containers see the gate directory
ENTRY = f"{MOUNT_POINT}/vnetbench-entry"
FIFO_IN_CONTAINER = f"{MOUNT_POINT}/{FIFO_NAME}"
MARKS_DIR = "marks"
START_FILE = "start"  # beside the wrapper: the number of the programs' current start
MARKS_MOUNT = "/vnetbench-marks"  # writable, unlike the wrapper's directory
# The wrapper writes marks as the container's user, root in every gated image: it
# runs `ip route` (VNETBENCH_ROUTE) and vNet's switches and agents open TUN devices,
# which only root can. Root writes here without the directory's permission (Docker
# keeps CAP_DAC_OVERRIDE; rootless Docker's root is vnetbench's own user), as it reads
# the 0600 key files beside it; nobody else needs to (it was 0777).
MARKS_MODE = 0o700
STAMP = re.compile(r"vnetbench-gate released (?P<seconds>\d+[.,]\d+)")
HOLD_SECONDS = 1.0
READY_FILE = "/run/vnetbench-ready"  # made by a service's own script once it is set up


def prepare_gate(run_dir: Path) -> Path:
    """The run's gate directory: the entry wrapper and a fresh named pipe."""
    directory = run_dir / GATE_DIR
    directory.mkdir(parents=True, exist_ok=True)
    entry = directory / ENTRY_SOURCE.name
    shutil.copyfile(ENTRY_SOURCE, entry)
    entry.chmod(0o555)
    fifo = directory / FIFO_NAME
    if fifo.exists():
        fifo.unlink()
    os.mkfifo(fifo, 0o644)
    marks = directory / MARKS_DIR
    shutil.rmtree(marks, ignore_errors=True)  # a stale mark would open the gate early
    marks.mkdir(mode=MARKS_MODE)
    marks.chmod(MARKS_MODE)  # mkdir's mode is cut by the umask; chmod is not
    write_start(directory, 1)
    return directory


def write_start(gate_dir: Path, number: int) -> None:
    """The start number the wrapper puts in its marks (written whole: temp, rename)."""
    temporary = gate_dir / f".{START_FILE}"
    temporary.write_text(f"{number}\n")
    temporary.chmod(0o644)
    temporary.replace(gate_dir / START_FILE)


def template_context() -> dict[str, object]:
    """What templates need for gated agents: the entry wrapper and the pipe."""
    return {"entry": ENTRY, "fifo": FIFO_IN_CONTAINER}


def release(gate_dir: Path, hold_seconds: float = HOLD_SECONDS) -> float:
    """Release every container waiting at the gate; return the release time (epoch s)."""
    released = time.time()  # before open(): the waiting side wakes during the call
    fd = os.open(gate_dir / FIFO_NAME, os.O_RDWR | os.O_NONBLOCK)
    try:
        time.sleep(hold_seconds)
    finally:
        os.close(fd)
    return released


def release_stamp(log_text: str, since: float | None = None) -> float | None:
    """The latest release time a container stamped in its log (at or after `since`,
    epoch seconds, when given), if it was released."""
    stamps = [float(found["seconds"].replace(",", ".")) for found in STAMP.finditer(log_text)]
    stamps = [s for s in stamps if since is None or s >= since]
    return stamps[-1] if stamps else None


def supervise(services: dict[str, Any], roles: Iterable[str]) -> None:
    """Run every service of these roles under the entry wrapper's supervision (in
    place): its marks directory; for a service behind the gate, a neighbour table
    flushed before each start again (a fresh container's is empty: its first packets
    wait for ARP); for one not behind it, its health check as the readiness test the
    wrapper runs after each start again."""
    wanted = set(roles)
    for name, service in services.items():
        if service.get("labels", {}).get(labels.ROLE) not in wanted:
            continue
        environment = service.setdefault("environment", {})
        environment["VNETBENCH_MARKS"] = f"{MARKS_MOUNT}/{name}"
        test = service.get("healthcheck", {}).get("test")
        if "VNETBENCH_GATE" in environment:  # a restart starts it as a fresh container
            environment["VNETBENCH_FORGET_NEIGHBOURS"] = "1"
        elif test and test != ["NONE"]:
            environment["VNETBENCH_READY"] = shell_test(test)
        elif "VNETBENCH_MARKS" in environment:  # marks itself (ready_mark): not before
            environment["VNETBENCH_READY"] = f"test -f {READY_FILE}"  # its set-up is done
        volumes = service.setdefault("volumes", [])
        if not any(str(v).endswith(f":{MARKS_MOUNT}") for v in volumes):  # ready_mark's
            volumes.append(f"./{GATE_DIR}/{MARKS_DIR}:{MARKS_MOUNT}")
        if not any(str(v).endswith(f":{MOUNT_POINT}:ro") for v in volumes):
            volumes.append(f"./{GATE_DIR}:{MOUNT_POINT}:ro")
        entrypoint = service.get("entrypoint") or []
        if not entrypoint or entrypoint[0] != ENTRY:
            service["entrypoint"] = [ENTRY, *entrypoint]


def shell_test(test: str | list[str]) -> str:
    """A compose health-check test as one shell command."""
    if isinstance(test, str):
        return test
    kind, *words = test
    return words[0] if kind == "CMD-SHELL" else shlex.join(words)


def marks_missing(gate_dir: Path, names: Iterable[str], kind: str, start: int) -> list[str]:
    """The services that have not marked start number `start` ("waiting" or "ready")."""
    marks = gate_dir / MARKS_DIR
    return sorted(n for n in names if not (marks / f"{n}.{kind}.{start}").exists())


def wait_for_marks(gate_dir: Path, names: Iterable[str], kind: str, start: int,
                   timeout_s: float) -> list[str]:
    """Wait (bounded) until every service has marked this start; the ones that did not.
    A directory listing every 50 ms: no engine call, and no measurement is running."""
    deadline = time.monotonic() + timeout_s
    missing = marks_missing(gate_dir, names, kind, start)
    while missing and time.monotonic() < deadline:
        time.sleep(0.05)
        missing = marks_missing(gate_dir, missing, kind, start)
    return missing


@dataclass(frozen=True)
class GateSpread:
    released: int
    waiting: int
    first: float | None  # epoch seconds
    last: float | None

    @property
    def spread_ms(self) -> float | None:
        if self.first is None or self.last is None:
            return None
        return (self.last - self.first) * 1000


def gate_spread(stamps: Mapping[str, float | None]) -> GateSpread:
    """First to last release over the gated containers; `waiting` were never released."""
    seen = [s for s in stamps.values() if s is not None]
    return GateSpread(released=len(seen), waiting=len(stamps) - len(seen),
                      first=min(seen) if seen else None, last=max(seen) if seen else None)
