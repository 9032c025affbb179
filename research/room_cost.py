"""The testbed's own cost of a room (issue #60, item 2): the host's memory above idle
and the containers at the peak, and how long each step took, for one `vnetbench run
room` command.

    python -m research.room_cost LABEL -- vnetbench run room -t ... --machines 300 ...

It reads MemAvailable (/proc/meminfo) and counts the engine's container cgroups
(CGROUP_GLOBS) every SAMPLE_S seconds while the command
runs: two file reads, no engine call (the sampling is part of what the room measures,
and small). The idle reading is the one before the command. Each step's time is the
command's own "✓ step (N s)" lines. The record goes to research/data/room-cost/LABEL.json
and is printed.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

DATA = Path(__file__).parent / "data" / "room-cost"
SAMPLE_S = 2.0
# each container's cgroup: v1's memory controller, or v2's systemd scopes
CGROUP_GLOBS = (("/sys/fs/cgroup/memory/docker", "[0-9a-f]" * 12 + "*"),
                ("/sys/fs/cgroup/system.slice", "docker-*.scope"))
STEP = re.compile(r"✓ (?P<step>.+?) \((?P<seconds>[\d.]+) s\)")


@dataclass
class Cost:
    label: str
    command: list[str]
    exit_status: int = 0
    idle_available_mib: float = 0.0
    peak_above_idle_mib: float = 0.0
    peak_containers: int = 0
    wall_s: float = 0.0
    steps: list[tuple[str, float]] = field(default_factory=list)


def available_mib() -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no MemAvailable in /proc/meminfo")


def containers() -> int:
    return max(sum(1 for _ in Path(root).glob(pattern)) for root, pattern in CGROUP_GLOBS)


def measure(label: str, command: list[str]) -> Cost:
    cost = Cost(label, command, idle_available_mib=available_mib())
    done = threading.Event()

    def sample() -> None:
        while not done.wait(SAMPLE_S):
            cost.peak_above_idle_mib = max(cost.peak_above_idle_mib,
                                           cost.idle_available_mib - available_mib())
            cost.peak_containers = max(cost.peak_containers, containers())

    sampler = threading.Thread(target=sample, daemon=True)
    began = time.monotonic()
    sampler.start()
    # wide lines: a step's line longer than the console's 80 columns wraps, and its time
    # is then not on the line that names it (a 1000-machine run's bring-up was lost so)
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, env={**os.environ, "COLUMNS": "400"})
    try:
        output, _ = process.communicate()
    except KeyboardInterrupt:  # the run's own interrupt tears its stack down: wait for it
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate()
    done.set()
    sampler.join()
    cost.wall_s = round(time.monotonic() - began, 1)
    cost.exit_status = process.returncode
    cost.steps = [(m["step"], float(m["seconds"])) for m in STEP.finditer(output)]
    cost.peak_above_idle_mib = round(cost.peak_above_idle_mib, 1)
    sys.stdout.write(output[-3000:])
    return cost


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        sys.exit(__doc__)
    cost = measure(argv[0], argv[2:])
    DATA.mkdir(parents=True, exist_ok=True)
    (DATA / f"{cost.label}.json").write_text(json.dumps(asdict(cost), indent=1) + "\n")
    print(json.dumps(asdict(cost), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
