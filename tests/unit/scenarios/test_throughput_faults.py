"""Throughput's stream under a schedule of faults: what a stream between two agents
can take, checked before anything starts, and its rows: per-event figures, each
event's instants on the stream's axis, the timeline, whether it survived."""

from __future__ import annotations

import json

import pytest

from vnetbench.errors import UserError
from vnetbench.faults.on_stack import ScheduleOutcome
from vnetbench.measure.room_faults import EventWindow
from vnetbench.model.topology import parse_topology
from vnetbench.scenarios import get_scenario
from vnetbench.scenarios.throughput_faults import stream_fault_result

THROUGHPUT = get_scenario("throughput")
T0 = 1000.0


def topology(*faults: dict[str, object], seconds: int = 20) -> object:
    return parse_topology({"name": "t", "switches": 3, "agents": 2,
                           "settings": {"seconds": seconds}, "faults": list(faults)}, "t")


def test_a_stream_takes_link_faults_and_kills_of_switches_only() -> None:
    THROUGHPUT.check(topology({"at": "5s", "flap": "backbone", "times": 2, "down": "1s",
                               "up": "1s"}, {"at": "12s", "kill": "switch2",
                                             "restart_after": "2s"}))
    with pytest.raises(UserError, match=r"faults.0 \(server killed.*has none"):
        THROUGHPUT.check(topology({"at": "5s", "kill": "server", "restart_after": "1s"}))
    with pytest.raises(UserError, match="last step comes 9 s after the stream begins"):
        THROUGHPUT.check(topology({"at": "5s", "link": "backbone", "for": "4s"}, seconds=8))


def test_the_stream_s_rows_under_a_fault() -> None:
    intervals = [{"sum": {"start": k / 10, "end": (k + 1) / 10,
                          "bits_per_second": 0.0 if 100 <= k < 130 else 1e8}}
                 for k in range(200)]
    outcome = ScheduleOutcome({}, [EventWindow("backbone-down", T0 + 10, T0 + 13.004)],
                              {"backbone-down": 3000.0})
    metrics, series, words = stream_fault_result(json.dumps({"intervals": intervals}),
                                                 T0, outcome, survived=True)
    assert metrics["stream_fault_held_ms_backbone-down"][0] == pytest.approx(3004.0)
    assert metrics["stream_fault_declared_ms_backbone-down"][0] == 3000.0
    assert metrics["stream_fault_at_s_backbone-down"][0] == 10.0
    assert metrics["stream_fault_stalled_ms_backbone-down"][0] == pytest.approx(3000.0)
    # back in the interval the lift fell in (it began 4 ms before the lift): 0
    assert metrics["stream_fault_recovery_ms_backbone-down"][0] == 0.0
    assert metrics["stream_survived"][0] == 1.0
    assert len(series) == 200 and series[0].interval_s == pytest.approx(0.1)
    assert words == []
    _, _, dead = stream_fault_result("iperf3: error - control socket has closed", T0,
                                     outcome, survived=False)
    assert dead == ["the stream did not survive the faults: iperf3 ended its test with an "
                    "error (its report is in raw/)"]
