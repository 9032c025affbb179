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
from python_on_whales import Container, docker
from python_on_whales.exceptions import NoSuchContainer

from tests.integration.conftest import leftovers
from vnetbench.scenarios.throughput import CLIENTS_LEAD_PER_CLIENT_S, CLIENTS_LEAD_S

pytestmark = pytest.mark.integration


def client_probe(container: Container) -> bool:
    """An iperf3 client's probe (the listing and this inspection are two calls: a probe
    that ended between them, e.g. a client retrying while its server starts, is none)."""
    try:
        return "iperf3" in (container.config.cmd or []) and "-c" in (container.config.cmd or [])
    except NoSuchContainer:
        return False


def wait_for_stream(named: str, clients: int, timeout: float = 90) -> str:
    """Run id of the run of the topology `named` (only the test's own: make test runs two
    tests at once) whose iperf3 client probes are streaming: several clients wait
    in vnetbench-at for their shared instant (at most the lead after they are created),
    so the interrupt lands after it, in the stream."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        probes = [p for p in docker.container.list(filters=[("label", "vnetbench.tool=iperf3")])
                  if client_probe(p)
                  and str(p.config.labels.get("vnetbench.run", "")).startswith(f"{named}-")]
        if probes:
            if clients > 1:
                time.sleep(CLIENTS_LEAD_S + CLIENTS_LEAD_PER_CLIENT_S * clients + 1)
            return str(probes[0].config.labels["vnetbench.run"])
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
        run_id = wait_for_stream("it-interrupt", clients)
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
