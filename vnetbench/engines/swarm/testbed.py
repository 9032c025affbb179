"""A test swarm on this one machine: Docker-in-Docker nodes of the project's Debian 13
base with Debian's own engine (images/swarm-node), joined into a swarm.

For tests and trials of `--engine swarm` only: the nodes share this machine's
kernel and cores, so their numbers say what the swarm path costs, not what
separate hosts would measure. A node container cannot be `--privileged` here
(the host's bounding set lacks CAP_SYS_RESOURCE), so it gets every other
capability, seccomp and AppArmor unconfined, all devices, the cgroup tree
read-write, a tmpfs on /run and a volume for /var/lib/docker. The system under
test runs inside the nodes unprivileged, as on any host.

Every object of the test swarm (nodes, their volumes, its network) carries its
label and an owner (`detached:swarm up`: left up on purpose), and `swarm down`
removes by that label only: a user's object that merely shares the name prefix
is never touched.
"""

from __future__ import annotations

import shutil
import string
import subprocess
import time

from python_on_whales.exceptions import DockerException

from vnetbench.engines.build import build_image, ensure_base_image, is_current
from vnetbench.engines.docker import (
    QUICK_CALL_SECONDS,
    bounded_client,
    docker,
    quick,
    translated,
)
from vnetbench.engines.swarm.cluster import (
    ENDPOINT_LABEL,
    TEST_SOCKETS,
    TEST_SWARM_LABEL,
)
from vnetbench.engines.swarm.cluster import (
    test_node_endpoint as endpoint,
)
from vnetbench.errors import EnvironmentProblem, UserError
from vnetbench.runtime.labels import OWNER, LabelFilter, detached_owner
from vnetbench.terminal.ui import note, waiting

NODE_IMAGE = "vnetbench/swarm-node:trixie"
NETWORK = "vnetbench-swarm"
SOCKETS = TEST_SOCKETS
VOLUME_PREFIX = "vnetbench-swarm-"  # names only: objects are found by TEST_SWARM_LABEL
CONTAINER_PREFIX = "vnetbench-swarm-"
MAX_TEST_NODES = 5
START_SECONDS = 90
NODE_CAPABILITIES = (  # all but SYS_RESOURCE, which this host's bounding set lacks
    "AUDIT_CONTROL", "AUDIT_READ", "AUDIT_WRITE", "BLOCK_SUSPEND", "BPF", "CHECKPOINT_RESTORE",
    "CHOWN", "DAC_OVERRIDE", "DAC_READ_SEARCH", "FOWNER", "FSETID", "IPC_LOCK", "IPC_OWNER",
    "KILL", "LEASE", "LINUX_IMMUTABLE", "MAC_ADMIN", "MAC_OVERRIDE", "MKNOD", "NET_ADMIN",
    "NET_BIND_SERVICE", "NET_BROADCAST", "NET_RAW", "PERFMON", "SETFCAP", "SETGID", "SETPCAP",
    "SETUID", "SYS_ADMIN", "SYS_BOOT", "SYS_CHROOT", "SYS_MODULE", "SYS_NICE", "SYS_PACCT",
    "SYS_PTRACE", "SYS_RAWIO", "SYS_TIME", "SYS_TTY_CONFIG", "SYSLOG", "WAKE_ALARM",
)


def test_swarm_labels(kind: str) -> dict[str, str]:
    """The labels of every object of the test swarm: what it is, and who owns it."""
    return {TEST_SWARM_LABEL: kind, OWNER: detached_owner("vnetbench swarm up")}


def node_names(count: int) -> list[str]:
    return [f"node-{letter}" for letter in string.ascii_lowercase[:count]]


def test_swarm_nodes() -> list[str]:
    try:
        found = quick.container.list(all=True, filters=[("label", TEST_SWARM_LABEL)])
    except DockerException:
        return []
    return sorted(str(c.config.hostname) for c in found)


def check_node_count(count: int) -> None:
    """Checked before the engine is asked: a count no test swarm can have."""
    if not 2 <= count <= MAX_TEST_NODES:
        raise UserError(f"A test swarm has 2 to {MAX_TEST_NODES} nodes, not {count}: give "
                        f"--nodes between 2 and {MAX_TEST_NODES}.")


@translated
def swarm_up(count: int = 2) -> str:
    """The test swarm of `count` nodes (kept when it is there already); its manager."""
    check_node_count(count)
    names = node_names(count)
    if test_swarm_nodes() == names and answers(names):
        return endpoint(names[0])
    swarm_down()
    if not is_current(NODE_IMAGE, "swarm-node"):
        build_image("swarm-node", NODE_IMAGE, ensure_base_image())
    docker.network.create(NETWORK, labels=test_swarm_labels("network"))
    with waiting(f"starting {count} swarm node(s) and forming the swarm"):
        for index, name in enumerate(names):
            start_node(name, "manager" if index == 0 else "worker")
        wait_for_engines(names)
        form_swarm(names)
    note(f"test swarm up: {', '.join(names)}; manager at {endpoint(names[0])}")
    return endpoint(names[0])


def start_node(name: str, kind: str) -> None:
    sockets = SOCKETS / name
    sockets.mkdir(parents=True, exist_ok=True)
    volume = docker.volume.create(f"{VOLUME_PREFIX}{name}", labels=test_swarm_labels("volume"))
    docker.run(
        NODE_IMAGE, name=f"{CONTAINER_PREFIX}{name}", hostname=name, detach=True,
        networks=[NETWORK], cap_add=list(NODE_CAPABILITIES),
        security_options=["seccomp=unconfined", "apparmor=unconfined",
                          "systempaths=unconfined"],
        device_cgroup_rules=["a *:* rwm"], tmpfs=["/run"],
        volumes=[("/sys/fs/cgroup", "/sys/fs/cgroup", "rw"),
                 (volume.name, "/var/lib/docker"),
                 (str(sockets), "/vnetbench-socket"),
                 ("/lib/modules", "/lib/modules", "ro")],
        labels=test_swarm_labels(kind), pull="never")


def answers(names: list[str]) -> bool:
    for name in names:
        try:
            bounded_client(10, host=endpoint(name)).system.info()
        except DockerException:
            return False
    return True


def wait_for_engines(names: list[str]) -> None:
    deadline = time.monotonic() + START_SECONDS
    while not answers(names):
        if time.monotonic() > deadline:
            logs = str(docker.container.logs(f"{CONTAINER_PREFIX}{names[-1]}", tail=5))
            raise EnvironmentProblem(f"The test swarm's node engines did not answer within "
                                     f"{START_SECONDS} s; the last node's log ends: {logs.strip()} "
                                     "Run 'vnetbench swarm down' and try again.")
        time.sleep(0.5)


def form_swarm(names: list[str]) -> None:
    manager = bounded_client(QUICK_CALL_SECONDS, host=endpoint(names[0]))
    address = docker.container.inspect(f"{CONTAINER_PREFIX}{names[0]}").network_settings
    advertise = address.networks[NETWORK].ip_address  # type: ignore[index]
    manager.swarm.init(advertise_address=advertise)
    token = manager.swarm.join_token("worker")
    for name in names[1:]:
        bounded_client(QUICK_CALL_SECONDS, host=endpoint(name)).swarm.join(
            f"{advertise}:2377", token=token)
    for name in names:
        manager.node.update(name, labels_add={ENDPOINT_LABEL: endpoint(name)})


@translated
def swarm_down() -> int:
    """Remove the test swarm's nodes, their engines' volumes and the network: what
    carries the test swarm's label, nothing else (a name proves nothing)."""
    by_label: list[LabelFilter] = [("label", TEST_SWARM_LABEL)]
    found = quick.container.list(all=True, filters=by_label)
    if found:
        quick.container.remove(found, force=True, volumes=True)
    volumes = quick.volume.list(filters=by_label)
    if volumes:
        quick.volume.remove([str(volume.name) for volume in volumes])
    for network in quick.network.list(filters=by_label):
        quick.network.remove(network)
    shutil.rmtree(SOCKETS, ignore_errors=True)
    unlabelled = unlabelled_node_volumes({str(v.name) for v in quick.volume.list()})
    if unlabelled:
        note(f"kept the volume(s) {', '.join(unlabelled)}: named as a test swarm "
             "node's, but without its label (an older vnetbench's, or not vnetbench's). If "
             f"they are an old test swarm's, 'docker volume rm {' '.join(unlabelled)}'.",
             style="yellow")
    return len(found)


def unlabelled_node_volumes(names: set[str]) -> list[str]:
    """Of these volumes (none of them carrying the label), those named exactly as a
    node's volume is."""
    return sorted(f"{VOLUME_PREFIX}{node}" for node in node_names(MAX_TEST_NODES)
                  if f"{VOLUME_PREFIX}{node}" in names)


def run_on_node(node: str, argv: list[str]) -> str:
    """A docker command against one test node's engine (tests and the README's checks)."""
    return subprocess.run(["docker", "--host", endpoint(node), *argv], capture_output=True,
                          text=True, check=True, timeout=QUICK_CALL_SECONDS).stdout
