"""Nothing removed that is not ours, nothing secret left behind (issue #36): a user's
volume named like the test swarm's survives `swarm down`; a live run owned from
another PID namespace survives `clean`; no private key stays in the results
directory after a SIGKILL mid-run and `clean`, nor after Ctrl-C while keys are made;
a user's key file under the --results `clean` is given stays, while a key left in
the run directory of a killed run (marked by vnetbench as it made it) goes (#61)."""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from python_on_whales import docker

from tests.integration.conftest import leftovers
from tests.integration.test_teardown import wait_for_stream
from vnetbench.runtime import labels
from vnetbench.runtime.images import TOOLS_IMAGE
from vnetbench.runtime.rundir import marked_run_directories
from vnetbench.runtime.scratch import private_keys_under

pytestmark = pytest.mark.integration


def vnetbench(*argv: str, env: dict[str, str] | None = None,
              timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "vnetbench", *argv], capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, **(env or {})})


def test_a_user_s_volume_named_like_the_test_swarm_s_survives_swarm_down() -> None:
    name = "vnetbench-swarm-userdata"
    docker.volume.create(name)
    try:
        done = vnetbench("swarm", "down")
        assert done.returncode == 0, done.stderr
        assert docker.volume.exists(name), "swarm down removed a volume that is not its own"
    finally:
        if docker.volume.exists(name):
            docker.volume.remove(name)


def other_pid_namespace_owner() -> str:
    """An owner label as a vnetbench in a container sharing this host's name writes it:
    pid 1 of another PID namespace (a real one: a container's)."""
    holder = docker.run(TOOLS_IMAGE, ["sleep", "infinity"], detach=True, remove=True,
                        pull="never", labels=labels.helper_labels("pidns-holder", "test"))
    try:
        pid = int(holder.state.pid or 0)  # type: ignore[union-attr]
        namespace = os.stat(f"/proc/{pid}/ns/pid").st_ino
        start = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    finally:
        holder.remove(force=True)  # type: ignore[union-attr]
    assert str(namespace) != labels.pid_namespace()
    return f"{socket.gethostname()}:1:{start}:{namespace}"


def test_a_live_run_owned_from_another_pid_namespace_survives_clean() -> None:
    run_id = f"it-pidns-{secrets.token_hex(4)}"
    owner = other_pid_namespace_owner()
    docker.run(TOOLS_IMAGE, ["sleep", "infinity"], detach=True, pull="never",
               name=f"{run_id}-agent", labels={labels.RUN: run_id, labels.ROLE: "agent",
                                               labels.NODE: "a1", labels.OWNER: owner})
    try:
        done = vnetbench("clean")
        assert done.returncode == 0, done.stderr
        assert leftovers(run_id) == [f"{run_id}-agent"], "clean removed a live run"
        assert "another PID namespace" in done.stdout and "--run" in done.stdout
        explicit = vnetbench("clean", "--run", run_id)  # the way out the output names
        assert explicit.returncode == 0, explicit.stderr
        assert leftovers(run_id) == []
    finally:
        if leftovers(run_id):
            docker.container.remove(f"{run_id}-agent", force=True)


def start_run(tmp_path: Path, overlay: str, agents: int, seconds: int,
              scratch: Path) -> subprocess.Popen[str]:
    topology = tmp_path / "t.yml"
    topology.write_text(f"name: it-keys\noverlay: {overlay}\nswitches: 2\nagents: {agents}\n"
                        f"settings: {{seconds: {seconds}, passes: 1}}\n")
    return subprocess.Popen(
        # no baseline: its stream comes first and has no keys, so a kill in it tests nothing
        [sys.executable, "-m", "vnetbench", "run", "throughput", "-t", str(topology),
         "--no-baseline", "--out", str(tmp_path / "out")],
        env={**os.environ, "BENCH_SECONDS": "", "VNETBENCH_SCRATCH": str(scratch)},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def clean_results(tmp_path: Path, scratch: Path) -> subprocess.CompletedProcess[str]:
    done = vnetbench("clean", "--results", str(tmp_path / "out"),
                     env={"VNETBENCH_SCRATCH": str(scratch)})
    assert done.returncode == 0, done.stderr
    return done


def killed_mid_stream(tmp_path: Path, overlay: str, scratch: Path) -> str:
    """A run of overlay SIGKILLed once its stream runs (no teardown at all): its id."""
    process = start_run(tmp_path, overlay, agents=2, seconds=60, scratch=scratch)
    try:
        run_id = wait_for_stream("it-keys", 1, timeout=180)
        process.kill()
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    return run_id


@pytest.mark.parametrize("overlay", ["wireguard", "tinc", "openvpn"])
def test_no_private_key_stays_in_results_after_a_sigkill_mid_run_and_clean(
        tmp_path: Path, overlay: str) -> None:
    scratch = tmp_path / "scratch"
    run_id = killed_mid_stream(tmp_path, overlay, scratch)
    assert private_keys_under(scratch) != [], "killed before any key was made: nothing tested"
    clean_results(tmp_path, scratch)
    assert private_keys_under(tmp_path / "out") == []
    assert list((tmp_path / "out").rglob("rsa_key.priv")) == []
    assert not (scratch / run_id).exists(), "clean left the killed run's keys in scratch"
    assert leftovers(run_id) == []


def wait_for_first_key(places: list[Path], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(next(place.rglob("rsa_key.priv"), None) for place in places if place.exists()):
            return
        time.sleep(0.005)
    raise AssertionError("no tinc key was written within the timeout")


def test_no_private_key_stays_after_ctrl_c_while_tinc_s_keys_are_made(tmp_path: Path) -> None:
    """Many nodes: the keys take a while to make and write, and the interrupt lands
    while they are (the first written is the signal)."""
    scratch = tmp_path / "scratch"
    process = start_run(tmp_path, "tinc", agents=20, seconds=5, scratch=scratch)
    try:
        wait_for_first_key([tmp_path / "out", scratch])
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=180)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert list((tmp_path / "out").rglob("rsa_key.priv")) == []
    assert private_keys_under(tmp_path / "out") == []
    assert not any(scratch.rglob("rsa_key.priv")) if scratch.exists() else True
    clean_results(tmp_path, scratch)  # nothing for clean to find either
    assert private_keys_under(tmp_path / "out") == []


USER_KEY = ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"
            "-----END OPENSSH PRIVATE KEY-----\n")


def users_keys(results: Path) -> dict[Path, bytes]:
    """A user's own key files under the directory clean is given as --results (a home
    directory, say): an SSH key, and a stack directory an old vnetbench left with no
    marker (proof of nothing)."""
    keys = {results / ".ssh" / "id_ed25519": USER_KEY.encode(),
            results / "old-run" / "throughput" / "tinc" / "hub" / "rsa_key.priv":
                USER_KEY.replace("OPENSSH ", "RSA ").encode()}
    for path, content in keys.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    (results / "old-run" / "throughput" / "compose.yml").write_text("services: {}\n")
    return keys


def test_clean_keeps_a_user_s_key_file_under_the_results_it_is_given(tmp_path: Path) -> None:
    """`clean --results ~` deleted every file holding a PEM private key under it."""
    home = tmp_path / "home"
    keys = users_keys(home)
    done = vnetbench("clean", "--results", str(home),
                     env={"VNETBENCH_SCRATCH": str(tmp_path / "scratch")})
    assert done.returncode == 0, done.stderr
    assert {path: path.read_bytes() for path in keys} == keys, "clean removed a user's key"
    left = [line for line in done.stdout.splitlines() if "holding a private key" in line]
    assert len(left) == 1 and all(str(path) in left[0] for path in keys), done.stdout


def test_clean_removes_a_killed_run_s_key_in_its_marked_run_directory_only(
        tmp_path: Path) -> None:
    """A run killed mid-stream: a key left in its run directory (marked as vnetbench
    made it) is removed; the user's beside it, under the same --results, stays."""
    scratch = tmp_path / "scratch"
    run_id = killed_mid_stream(tmp_path, "wireguard", scratch)
    out = tmp_path / "out"
    marked = marked_run_directories(out)
    assert marked, "the killed run's directory carries no marker"
    left_by_the_run = marked[0] / "throughput" / "leftover.key"
    left_by_the_run.parent.mkdir(parents=True, exist_ok=True)
    left_by_the_run.write_text(USER_KEY)
    keys = users_keys(out)
    done = clean_results(tmp_path, scratch)
    assert not left_by_the_run.exists(), done.stdout
    assert {path: path.read_bytes() for path in keys} == keys, "clean removed a user's key"
    assert f"{left_by_the_run}" in done.stdout and str(next(iter(keys))) in done.stdout
    assert leftovers(run_id) == []
