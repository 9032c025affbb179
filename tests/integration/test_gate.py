"""The start gate on real containers: 50 waiting containers released at one instant."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from python_on_whales import docker

from tests.integration.conftest import leftovers
from vnetbench.engines import local
from vnetbench.runtime.gate import (
    ENTRY,
    FIFO_IN_CONTAINER,
    MOUNT_POINT,
    gate_spread,
    prepare_gate,
    release_stamp,
)
from vnetbench.runtime.gate import release as release_gate
from vnetbench.runtime.images import TOOLS_IMAGE
from vnetbench.runtime.labels import OWNER, current_owner
from vnetbench.runtime.labels import RUN as RUN_LABEL
from vnetbench.runtime.labels import run_filter as label_filter

pytestmark = pytest.mark.integration
CONTAINERS = 50
SPREAD_BOUND_MS = 500  # measured here: ~20 ms for 50-100 containers
# docker calls at once to start the containers and read their logs, as calibrate's gate
# figure does (runs/calibration.py GATE_STARTERS): one CLI call at a time left the 50
# starts and each poll's 50 log reads end to end, which the release does not depend on
STARTERS = 4


def logs_of(run_id: str) -> dict[str, str]:
    found = docker.container.list(all=True, filters=label_filter(run_id))
    with ThreadPoolExecutor(STARTERS) as readers:
        return dict(zip([c.name for c in found],
                        readers.map(lambda c: str(docker.container.logs(c)), found),
                        strict=True))


def test_fifty_containers_leave_the_gate_together(tmp_path: Path) -> None:
    run_id = f"it-gate-{int(time.time())}"
    gate = prepare_gate(tmp_path)
    try:
        def start(index: int) -> None:
            docker.run(TOOLS_IMAGE, ["sleep", "infinity"], entrypoint=ENTRY, detach=True,
                       name=f"{run_id}-{index}",
                       labels={RUN_LABEL: run_id, OWNER: current_owner()},
                       volumes=[(gate, MOUNT_POINT, "ro")], networks=["none"],
                       envs={"VNETBENCH_GATE": FIFO_IN_CONTAINER}, init=True, pull="never")

        with ThreadPoolExecutor(STARTERS) as starters:
            list(starters.map(start, range(CONTAINERS)))
        deadline = time.time() + 60
        while time.time() < deadline:
            logs = logs_of(run_id)
            if sum("vnetbench-gate waiting" in text for text in logs.values()) == CONTAINERS:
                break
            time.sleep(0.5)
        assert not any(release_stamp(text) for text in logs.values()), "released too early"

        released_at = release_gate(gate)
        time.sleep(0.5)
        stamps = {name: release_stamp(text) for name, text in logs_of(run_id).items()}
        spread = gate_spread(stamps)
        assert spread.released == CONTAINERS and spread.waiting == 0
        assert spread.spread_ms is not None and spread.spread_ms < SPREAD_BOUND_MS
        assert spread.first is not None and 0 <= spread.first - released_at < 1.0
        print(f"gate spread for {CONTAINERS} containers: {spread.spread_ms:.1f} ms")
    finally:
        local().remove_run(run_id)
    assert leftovers(run_id) == []
