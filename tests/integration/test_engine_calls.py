"""The Docker engine adapter's own reading of containers, on a real engine."""

import threading
import time
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from python_on_whales import docker
from python_on_whales.exceptions import NoSuchContainer

from vnetbench.engines.base import ContainerRecord, EngineEvent
from vnetbench.engines.compose import ComposeEngine
from vnetbench.engines.docker import container_logs, inspected_on, quick
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
               labels={labels.RUN: run_id, labels.ROLE: "agent"})
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


def test_logs_read_in_one_call_are_the_container_s_both_streams_and_a_gone_one_fails(
) -> None:
    """As python-on-whales' logs read them (stdout and stderr, timestamps when asked),
    and a missing container fails the call as it did there (NoSuchContainer)."""
    name = f"vnetbench-it-logs-{uuid.uuid4().hex[:8]}"
    docker.run(TOOLS_IMAGE, ["sh", "-c", "echo out; echo err >&2; sleep 60"], name=name,
               detach=True, pull="never")
    try:
        deadline = time.monotonic() + 30
        while "err" not in container_logs(quick, name, None, False):
            assert time.monotonic() < deadline, "the container printed nothing in 30 s"
            time.sleep(0.2)
        # the two streams are read from two pipes: their lines' order between them is
        # the reader threads', not the engine's
        assert sorted(container_logs(quick, name, None, False).splitlines()) == sorted(
            str(docker.container.logs(name)).splitlines()) == ["err", "out"]
        stamped = container_logs(quick, name, datetime.now(UTC) - timedelta(minutes=5), True)
        assert sorted(line.split(" ", 1)[1] for line in stamped.splitlines()) == ["err", "out"]
    finally:
        docker.container.remove(name, force=True)
    with pytest.raises(NoSuchContainer):
        container_logs(quick, name, None, False)
