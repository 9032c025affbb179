"""`vnetbench ab` on real containers: interleaved bring-ups, each its own run, and a
verdict of the right sign for a change the kernel imposes exactly."""

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from tests.integration.conftest import leftovers
from vnetbench.analysis.results import load_results, named
from vnetbench.model.topology import parse_topology
from vnetbench.report.ab import VERDICTS_FILE
from vnetbench.runs.ab import ab_session, make_arms, run_ab
from vnetbench.runs.session import run_scenarios
from vnetbench.scenarios import get_scenario

pytestmark = pytest.mark.integration

# 1 s streams: iperf3's -t is whole seconds (topology.py whole_seconds), so the least;
# 20 pings 10 ms apart (0.2 s) for each pass's liveness
SHORT = {"seconds": 1, "pings": 20, "ping_interval_ms": 10}


def test_a_backbone_halved_is_worse_on_tcp_with_the_ratio_tbf_imposes(tmp_path: Path) -> None:
    base = parse_topology({"name": "it-ab", "switches": 2, "agents": 2,
                           "settings": {**SHORT, "passes": 1}}, "test", overrides={})
    arms = make_arms(base, ["backbone.rate=100mbit"], ["backbone.rate=50mbit"])
    # 6 rounds: stats.MIN_PAIRS, the fewest whose exact signed-rank test can reach
    # p < 0.05 (a verdict); each a bring-up per arm, which is what ab is (12 runs)
    directory = run_ab(get_scenario("throughput"), arms, ab_session(6, confirm=False),
                       tmp_path, 0.05)

    header = json.loads((directory / "run.json").read_text())
    assert header["status"] == "completed" and header["aa"] is False
    assert [(s["round"], s["arm"]) for s in header["schedule"]][:4] == [
        (1, "A"), (1, "B"), (2, "B"), (2, "A")]
    runs = [s["run"] for s in header["schedule"]]
    assert len(set(runs)) == 12  # every bring-up a run (a stack) of its own
    verdicts = pd.read_csv(directory / VERDICTS_FILE).set_index("metric")
    tcp = verdicts.loc["tcp_mbit"]
    assert tcp["verdict"] == "worse" and tcp["pairs"] == 6
    # tbf holds each arm to its rate; TCP gets just under it on both, so B/A is about
    # 50/100 (0.4 to 0.6 leaves room for the 1 s streams' slow start)
    assert 0.4 < tcp["ratio"] < 0.6 and tcp["ci_high"] < 1
    assert verdicts.loc["tcp_retransmits", "verdict"] == "shown, not judged"
    frame = named(load_results(directory))
    assert set(frame["variant"]) == {"A", "B"} and set(frame["var_round"]) == set(range(1, 7))
    for run in runs:
        assert leftovers(run) == []


def test_a_pass_beside_a_busy_core_is_marked(tmp_path: Path) -> None:
    # the stream is held to 10 Mbit/s by tbf, so the testbed itself needs a few % of a
    # core and a busy loop beside it gets most of one of the two (a stream at full speed
    # takes both cores with its softirq time, and the loop got only 0.16 of one)
    topology = parse_topology({"name": "it-busy", "switches": 2, "agents": 2,
                               "links": {"backbone": {"rate": "10mbit"}},
                               # 3 s, as when its 0.5-core bound was set: kept
                               "settings": {**SHORT, "seconds": 3, "passes": 1}},
                              "test", overrides={})
    burner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        run_dir = run_scenarios(topology, [get_scenario("throughput")], tmp_path)
    finally:
        burner.kill()
        burner.wait()
    frame = named(load_results(run_dir))
    outside = frame.set_index("metric")["value"]["host_outside_cores"]
    assert outside >= 0.5, outside
    assert frame["status"].str.contains("measured under outside load").all()
    assert (frame["state"] == "ok").all()  # marked, not failed
