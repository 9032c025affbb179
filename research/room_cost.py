"""The testbed's own cost of a room (issue #60, item 2): the host's memory above idle
and the containers at the peak, and how long each step took, for one `vnetbench run
room` command.

    python -m research.room_cost LABEL -- vnetbench run room -t ... --machines 300 ...

It reads MemAvailable (/proc/meminfo) and counts the engine's container cgroups
(CGROUP_GLOBS) every SAMPLE_S seconds while the command
runs: two file reads, no engine call (the sampling is part of what the room measures,
and small). The idle reading is the one before the command. Each step's time is the
command's own "✓ step (N s)" lines, and when it ended, the moment its line came. The
peak can fall in a bring-up's burst of starting processes, which moves from run to run
(300 machines, one build: 4.0-6.4 GiB); the readings during the load (the first
"pass" step) are the room's steady cost, kept apart. The record goes to
research/data/room-cost/LABEL.json and is printed.
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
    step_ends_s: list[float] = field(default_factory=list)  # since the start, each step's
    samples: list[tuple[float, float, int]] = field(default_factory=list)  # s, MiB, containers
    load_above_idle_mib: float | None = None  # the largest reading during the load
    load_containers: int | None = None


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
            above, count = cost.idle_available_mib - available_mib(), containers()
            cost.samples.append((round(time.monotonic() - began, 1), round(above, 1), count))
            cost.peak_above_idle_mib = max(cost.peak_above_idle_mib, above)
            cost.peak_containers = max(cost.peak_containers, count)

    sampler = threading.Thread(target=sample, daemon=True)
    began = time.monotonic()
    sampler.start()
    # wide lines: a step's line longer than the console's 80 columns wraps, and its time
    # is then not on the line that names it (a 1000-machine run's bring-up was lost so)
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, env={**os.environ, "COLUMNS": "400"})
    lines: list[str] = []
    assert process.stdout is not None
    try:
        for line in process.stdout:
            lines.append(line)
            for found in STEP.finditer(line):
                cost.steps.append((found["step"], float(found["seconds"])))
                cost.step_ends_s.append(round(time.monotonic() - began, 1))
        process.wait()
    except KeyboardInterrupt:  # the run's own interrupt tears its stack down: wait for it
        process.send_signal(signal.SIGINT)
        process.communicate()
    done.set()
    sampler.join()
    cost.wall_s = round(time.monotonic() - began, 1)
    cost.exit_status = process.returncode
    cost.peak_above_idle_mib = round(cost.peak_above_idle_mib, 1)
    during_load(cost)
    sys.stdout.write("".join(lines)[-3000:])
    return cost


def during_load(cost: Cost) -> None:
    """The largest memory reading and container count within the first pass step."""
    for (step, seconds), end in zip(cost.steps, cost.step_ends_s, strict=True):
        if step.startswith("pass "):
            inside = [s for s in cost.samples if end - seconds <= s[0] <= end]
            if inside:
                cost.load_above_idle_mib = max(s[1] for s in inside)
                cost.load_containers = max(s[2] for s in inside)
            return


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
