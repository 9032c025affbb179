"""A keeper per node: the start gate, its marks and the node's clock, across hosts.

Each node holds a copy of the stack's gate directory. Its keeper is a small
container of the tools image with that copy mounted; vnetbench keeps one
`docker exec -i` session open to each keeper and speaks a line protocol over
it, so a release is one line written to every session at once (no process
start on the path) and a clock reading is one line each way.
"""

from __future__ import annotations

import select
import subprocess
import time
from dataclasses import dataclass

from python_on_whales.exceptions import DockerException

from vnetbench.engines.base import LARGEST_CPU_SHARES
from vnetbench.engines.docker import NodeEngine
from vnetbench.errors import EnvironmentProblem
from vnetbench.runtime import gate
from vnetbench.runtime.images import TOOLS_IMAGE
from vnetbench.runtime.labels import run_labels

KEEPER_ROLE = "gatekeeper"
# The keeper idles but for an instant: at a release it must not queue behind the
# containers another node's keeper has just woken (on shared cores they delayed it
# by up to 66 ms); its cgroup outweighs theirs (1024 each) at that instant.
KEEPER_CPU_SHARES = LARGEST_CPU_SHARES
ANSWER_SECONDS = 30.0  # a release holds the pipe open for 1 s; anything else is a line
CLOCK_SAMPLES = 9

# Sleep until an instant of this node's clock, then open the pipe (waking every
# container waiting at the gate), hold it open, close it.
RELEASE_AT = (
    "import os, sys, time\n"
    "at, hold = float(sys.argv[1]), float(sys.argv[2])\n"
    "time.sleep(max(0.0, at - time.time()))\n"
    "fd = os.open('release', os.O_RDWR | os.O_NONBLOCK)\n"
    "print('released %.6f' % time.time(), flush=True)\n"
    "time.sleep(hold)\n"
    "os.close(fd)\n")
PROTOCOL = r"""
mkdir -p "$1/marks" && cd "$1" || { echo "error: no gate directory $1"; exit 1; }
echo ready
while read -r command argument hold; do
  case "$command" in
    clock) date +%s.%N ;;
    start) { printf '%s\n' "$argument" > .start && chmod 644 .start && mv .start start \
             && echo ok; } || echo "error: start not written" ;;
    marks) echo $(ls marks) ;;
    release_at) python3 -c "$RELEASE_AT" "$argument" "$hold" \
                || echo "error: the gate did not open" ;;
    *) echo "unknown $command" ;;
  esac
done
"""


@dataclass(frozen=True)
class ClockOffset:
    """A node's clock minus this machine's, and half the best round trip (its bound)."""

    offset_s: float
    uncertainty_s: float

    @property
    def correction_s(self) -> float:
        """What to take from the node's times: nothing when the offset is within its
        own uncertainty (correcting by noise would add error, e.g. nodes of one host)."""
        return self.offset_s if abs(self.offset_s) > self.uncertainty_s else 0.0


class Gatekeeper:
    """One node's keeper container and the session to it."""

    def __init__(self, node: NodeEngine, run_id: str, name: str, gate_dir: str) -> None:
        self.node, self.run_id, self.name, self.gate_dir = node, run_id, name, gate_dir
        self.session: subprocess.Popen[str] | None = None

    def start(self, networks: list[str], mount: str) -> None:
        """The keeper, attached to every network of the run (a worker's Compose finds
        a swarm network only once a container of that node uses it)."""
        client = self.node.client
        first, *others = networks
        try:
            client.run(TOOLS_IMAGE, ["sleep", "infinity"], name=self.name, detach=True,
                       init=True, pull="never", volumes=[(mount, mount)], networks=[first],
                       cpu_shares=KEEPER_CPU_SHARES,
                       labels=run_labels(self.run_id, KEEPER_ROLE, self.node.name))
            for network in others:
                client.network.connect(network, self.name)
        except DockerException as error:
            raise EnvironmentProblem(
                f"The gatekeeper on swarm node {self.node.name} did not start: "
                f"{(error.stderr or str(error)).strip()[-400:]}") from None
        self.session = subprocess.Popen(
            ["docker", "--host", self.node.endpoint, "exec", "-i", "--env",
             f"RELEASE_AT={RELEASE_AT}", self.name, "sh", "-c", PROTOCOL, "keeper",
             self.gate_dir],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        ready = self.answer()
        if ready != "ready":
            raise EnvironmentProblem(
                f"The gatekeeper on swarm node {self.node.name} did not start: "
                f"{ready}")

    def send(self, line: str) -> None:
        assert self.session is not None and self.session.stdin is not None
        try:
            self.session.stdin.write(line + "\n")
            self.session.stdin.flush()
        except OSError:
            raise EnvironmentProblem(
                f"The gatekeeper session to swarm node {self.node.name} ended; "
                f"check that its engine answers at {self.node.endpoint}.") from None

    def answer(self, timeout_s: float = ANSWER_SECONDS) -> str:
        """The keeper's next line, within a bound (a stalled endpoint ends the run)."""
        assert self.session is not None and self.session.stdout is not None
        ready, _, _ = select.select([self.session.stdout], [], [], timeout_s)
        line = self.session.stdout.readline() if ready else ""
        if not line or line.startswith("error"):
            raise EnvironmentProblem(
                f"The gatekeeper on swarm node {self.node.name} "
                f"{'said: ' + line.strip() if line else 'did not answer'} "
                f"(within {timeout_s:.0f} s); check that its engine answers at "
                f"{self.node.endpoint}.")
        return line.strip()

    def ask(self, line: str) -> str:
        self.send(line)
        return self.answer()

    def clock(self) -> ClockOffset:
        """The node's clock offset, from the sample with the shortest round trip."""
        best: tuple[float, float] | None = None
        for _ in range(CLOCK_SAMPLES):
            before = time.time()
            there = float(self.ask("clock"))
            after = time.time()
            sample = (after - before, there - (before + after) / 2)
            best = sample if best is None or sample[0] < best[0] else best
        assert best is not None
        return ClockOffset(best[1], best[0] / 2)

    def write_start(self, number: int) -> None:
        self.ask(f"start {number}")

    def marks(self) -> set[str]:
        return set(self.ask("marks").split())

    def close(self) -> None:
        if self.session is not None:
            if self.session.stdin is not None:
                self.session.stdin.close()
            try:
                self.session.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.session.kill()
                self.session.wait()
            self.session = None


RELEASE_LEAD_S = 0.3  # time for every keeper to be told the instant, and ready for it


def release_all(keepers: list[Gatekeeper], offsets: dict[str, ClockOffset],
                hold_s: float = gate.HOLD_SECONDS) -> tuple[float, dict[str, float]]:
    """Every keeper opens its node's gate at one instant, told in advance on each node's
    own clock: measured on this machine, a release message that the first node's
    released containers had to compete with for the cores reached the second node up
    to 430 ms late; a time set beforehand does not wait for a message. The instant
    (this machine's clock) is returned, with the time each node's gate opened (on this
    machine's clock too)."""
    released = time.time() + RELEASE_LEAD_S
    for keeper in keepers:
        offset = offsets.get(keeper.node.name)
        on_node = released + (offset.correction_s if offset else 0.0)
        keeper.send(f"release_at {on_node:.6f} {hold_s}")
    opened = {}
    for keeper in keepers:
        offset = offsets.get(keeper.node.name)
        there = float(keeper.answer(ANSWER_SECONDS + RELEASE_LEAD_S).split()[-1])
        opened[keeper.node.name] = there - (offset.correction_s if offset else 0.0)
    return released, opened


def wait_for_marks(keepers: list[Gatekeeper], names: list[str], kind: str, start: int,
                   timeout_s: float) -> list[str]:
    """As gate.wait_for_marks, over every node's marks (one line per node per look)."""
    deadline = time.monotonic() + timeout_s
    wanted = {f"{name}.{kind}.{start}": name for name in names}
    while True:
        seen = set().union(*(keeper.marks() for keeper in keepers))
        missing = sorted(name for mark, name in wanted.items() if mark not in seen)
        if not missing or time.monotonic() > deadline:
            return missing
        time.sleep(0.1)
