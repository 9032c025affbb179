"""The exit status on real containers (#62): a run whose path is dead exits 1 and names
the cell on stderr, its rows say so, and nothing of it is left."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.conftest import leftovers
from vnetbench.results import load_results

pytestmark = pytest.mark.integration

# The backbone drops every packet: the two agents sit on either side of it
DEAD_PATH = ("name: it-dead-path\nswitches: 2\nagents: 2\nlinks:\n  backbone: {loss: 100%}\n"
             "settings: {passes: 1, seconds: 1, pings: 10}\n")


def test_a_run_whose_path_is_dead_exits_1_and_names_the_cell(tmp_path: Path) -> None:
    (tmp_path / "t.yml").write_text(DEAD_PATH)
    done = subprocess.run([sys.executable, "-m", "vnetbench", "run", "throughput", "-t",
                           "t.yml", "--out", "out"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=600, env={**os.environ, "BENCH_SECONDS": ""})
    said = " ".join(done.stderr.split())
    assert done.returncode == 1, done.stderr[-2000:]
    assert "1 failed pass(es) in 1 cell(s): throughput on baseline: pass 1 path dead" in said
    assert "--allow-failed" in said and "Traceback" not in done.stderr
    (run_dir,) = (tmp_path / "out").iterdir()
    frame = load_results(run_dir)
    assert set(frame["state"]) == {"path dead"}
    assert frame["status"].iloc[0].startswith("path dead: 0 of 10 pings answered")
    assert leftovers(run_dir.name) == []
