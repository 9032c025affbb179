"""Faults on real containers: a system-under-test container killed mid-scenario, a
vnetbench process killed outright, two runs started at once, a full disk. Each ends
in a bounded, named failure, and nothing of any run is left behind."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from python_on_whales import docker

from tests.integration.conftest import leftovers
from vnetbench.analysis.results import load_results, named

pytestmark = pytest.mark.integration
TOPOLOGY = "name: {name}\nswitches: 2\nagents: 4\n"


def vnetbench(*args: str, cwd: Path, env: dict[str, str] | None = None,
              **popen: object) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "vnetbench", *args], cwd=cwd, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "BENCH_SECONDS": "", **(env or {})},
                            **popen)  # type: ignore[call-overload]


def streaming_run(named: str, timeout: float = 120, besides: tuple[str, ...] = ()) -> str:
    """The id of a run of the topology `named` (not one of `besides`) whose iperf3
    client probe is streaming: only the test's own (another test's run may stream
    beside it, make test running two at once)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for probe in docker.container.list(filters=[("label", "vnetbench.tool=iperf3")]):
            run_id = str((probe.config.labels or {}).get("vnetbench.run"))
            if ("-c" in (probe.config.cmd or []) and run_id.startswith(f"{named}-")
                    and run_id not in besides):
                return run_id
        time.sleep(0.2)
    raise AssertionError("no iperf3 client probe appeared")


# The stream the router dies in. The kill follows the client probe's appearance by a
# 0.2 s poll and two engine calls (a listing, the kill: about a second on this host),
# and the pass it must land in (its deaths are the pass's, outcomes.mark_deaths) lasts
# at least the stream, its 200 pings at 10 ms after it: 5 s leave several times that.
# A dead router holds its client until the stream's end plus iperf3's grace
# (measure/iperf.py CLIENT_GRACE_SECONDS): every second of stream is waited out after
# the kill (20 s was 15 s more of it).
KILLED_STREAM_S = 5


def test_a_router_killed_mid_stream_is_named_and_the_next_scenario_runs(
        tmp_path: Path) -> None:
    (tmp_path / "t.yml").write_text(TOPOLOGY.format(name="it-kill"))
    process = vnetbench("run", "throughput", "flood", "-t", "t.yml", "--passes", "1",
                        "--seconds", str(KILLED_STREAM_S), "--out", "out", cwd=tmp_path)
    run_id = streaming_run("it-kill")
    router = next(c for c in docker.container.list(filters=[
        ("label", f"vnetbench.run={run_id}"), ("label", "vnetbench.node=switch2")])
        if c.name.endswith("-router-switch2"))
    killed_at = time.monotonic()
    docker.container.kill(router)
    _, stderr = process.communicate(timeout=300)
    said = " ".join(stderr.split())
    # the throughput pass failed (its router died): a measured miss, exit 1, named
    assert process.returncode == 1, stderr[-2000:]
    assert "throughput on baseline: pass 1 " in said, said[-2000:]
    assert "flood on" not in said, said[-2000:]
    assert time.monotonic() - killed_at < 120, "a dead router must not make the run hang"
    frame = named(load_results(tmp_path / "out" / run_id))
    status = frame.groupby("scenario")["status"].first()
    assert "router-switch2 exited (137)" in status["throughput"], status["throughput"]
    assert "during pass 1" in status["throughput"]
    # the next scenario ran whole: ok, or partial only for its generator held by this
    # host under the declared rate (the pass says so; nothing to do with the kill)
    flood = frame[frame["scenario"] == "flood"]
    assert (flood["state"].eq("ok").all()
            or "the UDP generator offered" in status["flood"]), status["flood"]
    assert leftovers(run_id) == []


def test_a_killed_vnetbench_leaves_an_orphan_that_clean_alone_removes(tmp_path: Path) -> None:
    """SIGKILL gives no chance to tear down: the next command names the orphan, and
    `clean` removes it (and no run whose owner lives)."""
    (tmp_path / "t.yml").write_text(TOPOLOGY.format(name="it-orphan"))
    live = vnetbench("run", "throughput", "-t", "t.yml", "--passes", "1", "--seconds", "60",
                     "--out", "out-live", cwd=tmp_path)
    live_run = streaming_run("it-orphan")
    (tmp_path / "u.yml").write_text(TOPOLOGY.format(name="it-orphan2"))
    doomed = vnetbench("up", "-t", "u.yml", "--out", "out", cwd=tmp_path)
    doomed.communicate(timeout=300)
    up_run = next((tmp_path / "out").iterdir()).name
    try:
        # no pipes: the docker CLI its probe runs in would hold them open after the kill
        killed = subprocess.Popen([sys.executable, "-m", "vnetbench", "run", "throughput",
                                   "-t", "t.yml", "--passes", "1", "--seconds", "60", "--out",
                                   "out-killed"], cwd=tmp_path, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        orphan = streaming_run("it-orphan", besides=(live_run,))  # up, shaped and measuring
        killed.send_signal(signal.SIGKILL)
        killed.wait(timeout=30)
        clean = subprocess.run([sys.executable, "-m", "vnetbench", "clean"], cwd=tmp_path,
                               capture_output=True, text=True, timeout=300)
        assert clean.returncode == 0, clean.stderr
        assert orphan in clean.stderr, clean.stdout  # noticed and named before removal
        assert leftovers(orphan) == []
        assert leftovers(live_run) != [] and leftovers(up_run) != []  # still theirs
    finally:
        live.send_signal(signal.SIGINT)
        live.communicate(timeout=300)
        subprocess.run([sys.executable, "-m", "vnetbench", "down", up_run, "--out", "out"],
                       cwd=tmp_path, capture_output=True, timeout=300)
    assert leftovers(live_run) == [] and leftovers(up_run) == []


# A run whose measurement nothing reads: the claims (block, directory) come before it,
# and the pass's state is asserted, which a 1 s stream and 10 pings (no loss on a veth
# path) give as any longer one does (was 2 s and the default 200 pings at 10 ms: 3 s more
# a run)
BRIEF_RUN = ("--passes", "1", "--seconds", "1", "--pings", "10")


def test_two_runs_started_together_both_complete(tmp_path: Path) -> None:
    """Address blocks and run directories are claimed under a lock: no collision."""
    (tmp_path / "t.yml").write_text(TOPOLOGY.format(name="it-twins"))
    runs = [vnetbench("run", "throughput", "-t", "t.yml", *BRIEF_RUN, "--out", "out",
                      cwd=tmp_path) for _ in range(2)]
    outputs = [run.communicate(timeout=600) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], [err[-1500:] for _, err in outputs]
    directories = sorted((tmp_path / "out").iterdir())
    assert len(directories) == 2
    blocks = {json.loads((d / "run.json").read_text())["address_block"] for d in directories}
    assert len(blocks) == 2
    for directory in directories:
        assert named(load_results(directory))["state"].eq("ok").all()
        assert leftovers(directory.name) == []


def waiting_for_flock(pids: set[int], timeout: float = 120) -> None:
    """Until each of `pids` waits for a flock (a "->" line of /proc/locks)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        lines = Path("/proc/locks").read_text().splitlines()
        waiting = {int(line.split()[5]) for line in lines if " -> FLOCK" in line}
        if pids <= waiting:
            return
        time.sleep(0.1)
    raise AssertionError(f"not all of {pids} came to wait for the block lock")


def test_a_block_refused_by_the_engine_is_given_up_for_another(tmp_path: Path) -> None:
    """Two runs that keep their claims in different state directories (two users of
    one engine) choose a block at the same moment: held at the lock until both wait,
    both see the same free block. The engine refuses the networks that overlap ("Pool
    overlaps"); a refused run moves to another block, says so in run.json, and
    completes. Compose creates a stack's networks in parallel, so both runs may lose
    one network each and both move."""
    (tmp_path / "t.yml").write_text(TOPOLOGY.format(name="it-race"))
    held, runs = [], []
    for name in ("a", "b"):
        state = tmp_path / f"state-{name}"
        state.mkdir()
        lock = (state / "blocks.lock").open("a")
        fcntl.flock(lock, fcntl.LOCK_EX)
        held.append(lock)
        runs.append(vnetbench("run", "throughput", "-t", "t.yml", *BRIEF_RUN, "--out", "out",
                              cwd=tmp_path, env={"VNETBENCH_STATE": str(state)}))
    try:
        waiting_for_flock({run.pid for run in runs})
    finally:
        for lock in held:
            lock.close()
    outputs = [run.communicate(timeout=600) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], [err[-1500:] for _, err in outputs]
    records = [json.loads((d / "run.json").read_text()) for d in (tmp_path / "out").iterdir()]
    first_choices = {(r.get("address_blocks_refused") or [r["address_block"]])[0]
                     for r in records}
    assert len(first_choices) == 1, records  # the race took place
    assert any(r.get("address_blocks_refused") for r in records)
    assert records[0]["address_block"] != records[1]["address_block"]
    assert any("the run moves to" in " ".join(err.split()) for _, err in outputs)
    for record in records:
        assert leftovers(record["run_id"]) == []


def test_a_full_disk_is_one_paragraph_and_tears_down(tmp_path: Path) -> None:
    """Results on a 1 MiB filesystem: the run says so, removes its containers and its
    DOCKER-USER rule, and the files written before are whole."""
    small = tmp_path / "small"
    small.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(small)], check=True)
    try:
        (tmp_path / "t.yml").write_text(TOPOLOGY.format(name="it-full"))
        (small / "ballast").write_bytes(b"\0" * (1024 * 1024 - 48 * 1024))
        run = vnetbench("run", "throughput", "-t", "t.yml", "--passes", "3", "--seconds",
                        "1", "--out", str(small / "out"), cwd=tmp_path)
        _, stderr = run.communicate(timeout=600)
        assert run.returncode == 3, stderr[-2000:]  # the environment's: a full disk
        assert "No space left on device" in stderr and "Traceback" not in stderr
        run_dir = next((small / "out").iterdir())
        assert leftovers(run_dir.name) == []
        header = run_dir / "run.json"
        if header.exists():
            json.loads(header.read_text())  # whole, or not written at all
    finally:
        subprocess.run(["umount", str(small)], check=False)


def test_clean_keeps_a_shaped_topology_left_up_on_purpose(tmp_path: Path) -> None:
    """Its shapers were started by `up` and `shape`, processes that have ended: the
    run's own record (its networks, rendered `detached`) keeps it ours to keep."""
    (tmp_path / "s.yml").write_text(TOPOLOGY.format(name="it-shaped-up")
                                    + "links:\n  backbone: {rate: 100mbit}\n")
    up = vnetbench("up", "-t", "s.yml", "--out", "out", cwd=tmp_path)
    _, error = up.communicate(timeout=300)
    assert up.returncode == 0, error
    run_id = next((tmp_path / "out").iterdir()).name
    try:
        shaped = vnetbench("shape", run_id, "--set", "backbone.rate=50mbit", "--out", "out",
                           cwd=tmp_path)
        _, error = shaped.communicate(timeout=300)
        assert shaped.returncode == 0, error
        clean = subprocess.run([sys.executable, "-m", "vnetbench", "clean"], cwd=tmp_path,
                               capture_output=True, text=True, timeout=300)
        assert clean.returncode == 0, clean.stderr
        assert run_id in " ".join(clean.stdout.split()), clean.stdout  # kept, and named
        left = leftovers(run_id)
        assert any(name.endswith("-shaper") for name in left), left  # nothing of it removed
    finally:
        subprocess.run([sys.executable, "-m", "vnetbench", "down", run_id, "--out", "out"],
                       cwd=tmp_path, capture_output=True, timeout=300)
    assert leftovers(run_id) == []
