"""The engine restarted mid-run: one clear error, and `clean` afterwards leaves
nothing. Runs last (conftest): it stops the engine the other tests use."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.integration.conftest import leftovers
from tests.integration.test_faults import streaming_run

pytestmark = [pytest.mark.integration, pytest.mark.engine_restart]
ROOT = Path(__file__).resolve().parents[2]


def test_an_engine_restarted_mid_run_is_one_error_and_clean_leaves_nothing(
        tmp_path: Path) -> None:
    if os.geteuid() != 0 or not Path("/var/run/docker.pid").exists():
        pytest.skip("needs root and a dockerd this machine started (make setup)")
    (tmp_path / "t.yml").write_text("name: it-restart-engine\nswitches: 2\nagents: 2\n")
    run = subprocess.Popen([sys.executable, "-m", "vnetbench", "run", "throughput", "-t",
                            "t.yml", "--passes", "1", "--seconds", "60", "--out", "out"],
                           cwd=tmp_path, text=True, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
    run_id = streaming_run("it-restart-engine")
    os.kill(int(Path("/var/run/docker.pid").read_text()), signal.SIGKILL)
    try:
        _, stderr = run.communicate(timeout=300)
    finally:
        started = subprocess.run([str(ROOT / "scripts" / "ensure-docker")],
                                 capture_output=True, text=True, timeout=600)
    assert started.returncode == 0, started.stderr
    # the environment's status (vnetbench/terminal/exitstatus.py)
    assert run.returncode == 3, stderr[-2000:]
    assert "the Docker engine stopped answering" in " ".join(stderr.split())
    assert "Traceback" not in stderr
    time.sleep(2)
    clean = subprocess.run([sys.executable, "-m", "vnetbench", "clean"], cwd=tmp_path,
                           capture_output=True, text=True, timeout=300)
    assert clean.returncode == 0, clean.stderr
    assert leftovers(run_id) == []
