"""A run interrupted mid-stream (Ctrl-C or SIGTERM) leaves nothing behind and
keeps what it measured."""

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

pytestmark = pytest.mark.integration


def wait_for_stream(timeout: float = 90) -> str:
    """Run id of the run whose iperf3 client probe is streaming."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        probes = docker.container.list(filters=[("label", "vnetbench.tool=iperf3")])
        clients = [p for p in probes if "-c" in (p.config.cmd or [])]
        if clients:
            return str(clients[0].config.labels["vnetbench.run"])
        time.sleep(0.2)
    raise AssertionError("no iperf3 client probe appeared within the timeout")


@pytest.mark.parametrize(("sig", "clients"), [(signal.SIGINT, 1), (signal.SIGTERM, 1),
                                             (signal.SIGINT, 3)])
def test_interrupted_run_tears_down(tmp_path: Path, sig: signal.Signals, clients: int) -> None:
    """Interrupted mid-stream, also with several client containers streaming at once
    (their threads must not hold the exit until their 60 s are over)."""
    topology = tmp_path / "t.yml"
    topology.write_text("name: it-interrupt\nswitches: 2\nagents: 2\n"
                        f"settings: {{seconds: 60, passes: 1, clients: {clients}}}\n")
    process = subprocess.Popen(
        [sys.executable, "-m", "vnetbench", "run", "throughput", "-t", str(topology),
         "--out", str(tmp_path / "out")],
        env={**os.environ, "BENCH_SECONDS": ""}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )
    try:
        run_id = wait_for_stream()
        process.send_signal(sig)
        _, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, stderr
    assert "interrupted" in stderr
    assert "Traceback" not in stderr
    assert leftovers(run_id) == []
    record = json.loads((tmp_path / "out" / run_id / "run.json").read_text())
    assert record["status"].startswith("interrupted")
    assert record["ended"] is not None
