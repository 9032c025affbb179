"""The Docker engine adapter's own reading of containers, on a real engine."""

import os
import shutil
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from python_on_whales import docker

from vnetbench.engines.base import ContainerRecord, EngineError, EngineEvent
from vnetbench.engines.compose import ComposeEngine
from vnetbench.engines.docker import inspected_on, quick
from vnetbench.runtime import labels
from vnetbench.runtime.images import TOOLS_IMAGE

pytestmark = pytest.mark.integration


def test_one_inspection_reads_each_container_as_the_engine_has_it_and_skips_a_gone_one(
) -> None:
    """Names as `docker ps` prints them (the engine's own has a leading '/'), labels,
    state, addresses and the health check's start period, as the interface's records;
    a container removed before the call is left out, not an error."""
    mark = f"vnetbench-it-inspect-{uuid.uuid4().hex[:8]}"
    names = [f"{mark}-{n}" for n in (1, 2, 3)]
    started = [docker.run(TOOLS_IMAGE, ["sleep", "60"], name=name, detach=True,
                          labels={"it.mark": mark, "it.n": name[-1]}, pull="never",
                          health_cmd="true", health_start_period=timedelta(seconds=7))
               for name in names]
    try:
        docker.container.remove(started[1], force=True)
        records = inspected_on(quick, [c.id for c in started])
        assert all(isinstance(r, ContainerRecord) for r in records)
        assert [r.name for r in records] == [names[0], names[2]]
        assert [r.labels["it.n"] for r in records] == ["1", "3"]
        assert all(r.running and not r.paused and r.started and r.finished is None
                   for r in records)
        assert [r.start_period_s for r in records] == [7.0, 7.0]
        assert [set(r.addresses) for r in records] == [{"bridge"}, {"bridge"}]
        assert all(r.addresses["bridge"].count(".") == 3 for r in records)
        assert inspected_on(quick, [started[1].id]) == []
    finally:
        docker.container.remove([names[0], names[2]], force=True)


def test_a_start_watch_sees_the_run_s_container_start_with_its_labels() -> None:
    """watch_starts: the engine's event, as the interface's EngineEvent (name, labels)."""
    run_id = f"it-starts-{uuid.uuid4().hex[:8]}"
    name = f"vnetbench-{run_id}"
    watch = ComposeEngine().watch_starts(run_id)
    seen: list[EngineEvent] = []
    reader = threading.Thread(target=lambda: seen.extend(watch), daemon=True)
    reader.start()
    time.sleep(1.0)  # the stream is open before the container starts
    docker.run(TOOLS_IMAGE, ["sleep", "60"], name=name, detach=True, pull="never",
               labels={labels.RUN: run_id, labels.ROLE: "agent",
                       labels.OWNER: labels.current_owner()})
    try:
        deadline = time.monotonic() + 30
        while not seen:
            assert time.monotonic() < deadline, "no start event in 30 s"
            time.sleep(0.2)
    finally:
        watch.close()
        reader.join(timeout=10)
        docker.container.remove(name, force=True)
    assert [(e.kind, e.action, e.name) for e in seen] == [("container", "start", name)]
    assert seen[0].labels[labels.ROLE] == "agent"


def test_the_event_watch_sees_a_network_and_a_container_come_and_go() -> None:
    """watch_events (calibrate --scale's breakdown): networks' and containers' events
    with their names and times, read from the engine's JSON in engines/ only."""
    mark = f"vnetbench-it-events-{uuid.uuid4().hex[:8]}"
    watch = ComposeEngine().watch_events()
    seen: list[EngineEvent] = []
    reader = threading.Thread(target=lambda: seen.extend(watch), daemon=True)
    reader.start()
    time.sleep(1.0)  # the stream is open before anything happens
    began = time.time()
    docker.network.create(mark)
    docker.run(TOOLS_IMAGE, ["true"], name=mark, networks=[mark], remove=True, pull="never")
    docker.network.remove(mark)
    try:
        deadline = time.monotonic() + 30
        while not any(e.kind == "network" and e.action == "destroy" and e.name == mark
                      for e in seen):
            assert time.monotonic() < deadline, "no network destroy event in 30 s"
            time.sleep(0.2)
    finally:
        watch.close()
        reader.join(timeout=10)
    mine = [(e.kind, e.action) for e in seen if e.name == mark]
    for expected in [("network", "create"), ("container", "create"), ("container", "start"),
                     ("container", "die"), ("container", "destroy"), ("network", "destroy")]:
        assert expected in mine
    assert all(began - 5 < e.time < time.time() + 5 for e in seen if e.name == mark)


def test_doctor_finds_the_tools_image_through_the_runtime() -> None:
    """diagnose(local()): the tools image's id as the engine has it (HostRuntime.image_id)."""
    from vnetbench.deploy.doctor import diagnose
    from vnetbench.engines import local

    checks = {check.name: (check.ok, check.detail) for check in diagnose(local()).checks}
    assert checks["tools image"] == (True, str(docker.image.inspect(TOOLS_IMAGE).id)[:19])


def test_a_log_an_exec_and_a_listing_through_the_api_read_as_the_cli_s(
) -> None:
    """The calls made per container go through the engine's API (docker_api.py): a
    log is both streams as the CLI reads them (timestamps when asked), an exec its
    exit status and both streams, a listing the containers `docker ps` lists with
    their labels; a container that is gone fails a log and exits 1 an exec, with the
    engine's words."""
    engine = ComposeEngine()
    name = f"vnetbench-it-logs-{uuid.uuid4().hex[:8]}"
    docker.run(TOOLS_IMAGE, ["sh", "-c", "echo out; echo err >&2; sleep 60"], name=name,
               detach=True, pull="never", labels={labels.RUN: name, labels.ROLE: "probe",
                                           labels.OWNER: labels.current_owner()})
    try:
        deadline = time.monotonic() + 30
        while "err" not in engine.logs(name):
            assert time.monotonic() < deadline, "the container printed nothing in 30 s"
            time.sleep(0.2)
        # the CLI reads the two streams from two pipes: their lines' order between them
        # is its reader threads', not the engine's
        assert sorted(engine.logs(name).splitlines()) == sorted(
            str(docker.container.logs(name)).splitlines()) == ["err", "out"]
        stamped = engine.logs(name, datetime.now(UTC) - timedelta(minutes=5), True)
        assert sorted(line.split(" ", 1)[1] for line in stamped.splitlines()) == ["err", "out"]
        ran = engine.execute(name, ["sh", "-c", "echo a; echo b >&2; exit 3"])
        assert (ran.exit_code, ran.stdout, ran.stderr) == (3, "a\n", "b\n")
        listed = engine.containers([("label", f"{labels.RUN}={name}")])
        by_cli = docker.container.list(filters=[("label", f"{labels.RUN}={name}")])
        assert [c.name for c in listed] == [c.name for c in by_cli] == [name]
        assert listed[0].id == by_cli[0].id and listed[0].state == "running"
        assert listed[0].labels == {labels.RUN: name, labels.ROLE: "probe",
                                    labels.OWNER: labels.current_owner()}
    finally:
        docker.container.remove(name, force=True)
    with pytest.raises(EngineError, match="No such container"):
        engine.logs(name)
    gone = engine.execute(name, ["true"])
    assert gone.exit_code == 1 and "No such container" in gone.stderr
    assert engine.containers([("label", f"{labels.RUN}={name}")]) == []


def test_a_pass_s_docker_calls_counted_and_the_networks_removed_in_one(
        tmp_path: Path) -> None:
    """Every docker CLI process of a one-pass throughput run, through a shim that logs
    its arguments (python-on-whales and vnetbench's own calls find `docker` on PATH):
    the run's networks go in one `network remove`; the count of each subcommand is
    printed, the engine round trips a run costs (compare before and after a change)."""
    real = shutil.which("docker")
    assert real is not None
    log = tmp_path / "calls.log"
    shim = tmp_path / "bin" / "docker"
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> {log}\nexec {real} "$@"\n')
    shim.chmod(0o755)
    (tmp_path / "t.yml").write_text("name: it-calls\nswitches: 2\nagents: 2\n")
    done = subprocess.run(
        [sys.executable, "-m", "vnetbench", "run", "throughput", "-t", "t.yml", "--passes",
         "1", "--seconds", "1", "--pings", "20", "--out", "out"], cwd=tmp_path, text=True,
        capture_output=True, timeout=600,
        env={**os.environ, "BENCH_SECONDS": "", "PATH": f"{shim.parent}:{os.environ['PATH']}"})
    assert done.returncode == 0, done.stderr[-2000:]
    calls = log.read_text().splitlines()
    kinds = Counter(subcommand(call) for call in calls)
    print(f"{len(calls)} docker CLI calls:", dict(kinds.most_common()))
    removals = [call for call in calls if call.startswith(("network remove", "network rm"))]
    assert len(removals) == 1, removals  # the run's networks (each switch's, the backbone)
    assert len(removals[0].split()) > 3, removals  # more than one network in it


def subcommand(call: str) -> str:
    """'container ls', 'network remove', 'compose' (its options and files left out)."""
    words = call.split() or [""]
    return " ".join(words[:2]) if len(words) > 1 and words[1].isalpha() else words[0]
