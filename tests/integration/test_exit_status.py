"""The exit status on real containers (#62): a run whose path is dead exits 1 and names
the cell on stderr, its rows say so, and nothing of it is left; a run that meets its
--slo exits 0, one that misses it exits 1 and names the miss."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.conftest import leftovers
from vnetbench.analysis.results import load_results

pytestmark = pytest.mark.integration

# The backbone drops every packet: the two agents sit on either side of it
DEAD_PATH = ("name: it-dead-path\nswitches: 2\nagents: 2\nlinks:\n  backbone: {loss: 100%}\n"
             "settings: {passes: 1, seconds: 1, pings: 10}\n")
HEALTHY = "name: it-slo\nswitches: 2\nagents: 2\nsettings: {passes: 1, seconds: 1, pings: 10}\n"


def vnetbench_run(tmp_path: Path, topology: str, *options: str) -> subprocess.CompletedProcess[str]:
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "t.yml").write_text(topology)
    return subprocess.run([sys.executable, "-m", "vnetbench", "run", "throughput", "-t",
                           "t.yml", "--out", "out", *options], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "BENCH_SECONDS": ""})


def test_a_run_whose_path_is_dead_exits_1_names_the_cell_and_its_json_says_so(
        tmp_path: Path) -> None:
    """One run serves both readers (a dead path's run measures nothing a second run
    would change): the people's paragraph on stderr, and --json's document on stdout."""
    import json

    done = vnetbench_run(tmp_path, DEAD_PATH, "--json")
    said = " ".join(done.stderr.split())
    assert done.returncode == 1, done.stderr[-2000:]
    assert "1 failed pass(es) in 1 cell(s): throughput on baseline: pass 1 path dead" in said
    assert "--allow-failed" in said and "Traceback" not in done.stderr
    (run_dir,) = (tmp_path / "out").iterdir()
    frame = load_results(run_dir)
    assert set(frame["state"]) == {"path dead"}
    assert frame["status"].iloc[0].startswith("path dead: 0 of 10 pings answered")
    assert leftovers(run_dir.name) == []
    document = json.loads(done.stdout)  # nothing else on stdout
    assert document["exit_status"] == 1
    assert document["failed"] == [{"scenario": "throughput", "overlay": "baseline",
                                   "variant": "default", "passes": [1],
                                   "states": ["path dead"]}]
    assert not [f for f in document["figures"] if f["scenario"] == "throughput"]


def test_a_run_that_meets_its_slo_exits_0_and_one_that_misses_it_exits_1_in_json(
        tmp_path: Path) -> None:
    """The baseline path carries far more than 1 Mbit/s and far less than 1 Tbit/s. The
    met run is read as people read it (its targets' lines on stdout); the missed one
    with --json (one run for both readers of a miss): stdout is one document (each
    pass's result line, the comparison table and the targets' lines go to stderr),
    valid against its schema, the file holds the same, and the document says the exit
    status and the miss."""
    import json

    import jsonschema

    from vnetbench.generators.fileschemas import shipped

    met = vnetbench_run(tmp_path / "met", HEALTHY, "--slo", "throughput.tcp_mbit>=1")
    assert met.returncode == 0, met.stderr[-2000:]
    assert "met     throughput.tcp_mbit>=1 on baseline: " in met.stdout, met.stdout
    assert "MISSED" not in met.stdout
    (run_dir,) = (tmp_path / "met" / "out").iterdir()
    assert leftovers(run_dir.name) == []

    missed = tmp_path / "missed"
    done = vnetbench_run(missed, HEALTHY, "--slo", "throughput.tcp_mbit>=1000000",
                         "--json", "--json-file", "run-result.json")
    assert done.returncode == 1, done.stderr[-2000:]
    document = json.loads(done.stdout)  # nothing else on stdout
    jsonschema.validate(document, shipped("run-result.schema.json"))
    assert json.loads((missed / "run-result.json").read_text()) == document
    assert (document["command"], document["exit_status"], document["status"]) == (
        "run", 1, "completed")
    (target,) = document["targets"]
    assert (target["overlay"], target["met"], target["passes"]) == ("baseline", False, 1)
    (tcp,) = [f for f in document["figures"] if f["metric"] == "tcp_mbit"]
    assert tcp["passes"] == 1 and tcp["median"] == target["value"] > 0
    assert document["failed"] == []
    said = " ".join(done.stderr.split())
    assert "1 target(s) missed: throughput.tcp_mbit>=1000000 on baseline: " in said, said
    assert "MISSED throughput.tcp_mbit>=1000000" in said  # people's line, on stderr
    assert "failed pass" not in said
    assert leftovers(Path(document["directory"]).name) == []


def test_doctor_json_on_a_ready_machine(tmp_path: Path) -> None:
    """The machine `make test` set up is ready: exit 0, and the document says so."""
    import json

    import jsonschema

    from vnetbench.generators.fileschemas import shipped

    done = subprocess.run([sys.executable, "-m", "vnetbench", "doctor", "--json"],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    document = json.loads(done.stdout)
    jsonschema.validate(document, shipped("doctor.schema.json"))
    assert document["ready"] is True and document["exit_status"] == 0
    required = {c["name"]: c["ok"] for c in document["checks"] if c["required"]}
    assert required == {"docker engine": True, "compose v2": True, "tools image": True}
    assert "verdict: ready" in done.stderr
