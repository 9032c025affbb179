"""The Docker engine adapter's own reading of containers, on a real engine."""

import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from python_on_whales import docker
from python_on_whales.exceptions import NoSuchContainer

from vnetbench.engines.docker import container_logs, inspected_on, quick
from vnetbench.runtime.images import TOOLS_IMAGE

pytestmark = pytest.mark.integration


def test_one_inspection_reads_each_container_as_the_engine_has_it_and_skips_a_gone_one(
) -> None:
    """Names as `docker ps` prints them (the engine's own has a leading '/'), labels and
    state; a container removed before the call is left out, not an error."""
    mark = f"vnetbench-it-inspect-{uuid.uuid4().hex[:8]}"
    names = [f"{mark}-{n}" for n in (1, 2, 3)]
    started = [docker.run(TOOLS_IMAGE, ["sleep", "60"], name=name, detach=True,
                          labels={"it.mark": mark, "it.n": name[-1]}, pull="never")
               for name in names]
    try:
        docker.container.remove(started[1], force=True)
        records: list[Any] = inspected_on(quick, [c.id for c in started])  # models' Nones
        assert [r.name for r in records] == [names[0], names[2]]
        assert [r.config.labels["it.n"] for r in records] == ["1", "3"]
        assert all(r.state.running and r.state.started_at for r in records)
        assert inspected_on(quick, [started[1].id]) == []
    finally:
        docker.container.remove([names[0], names[2]], force=True)


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
