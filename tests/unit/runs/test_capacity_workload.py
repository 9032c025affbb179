"""capacity's targets per phase and per at-once event of the room's workload: parsed
into the series they judge, refused when the workload has no such phase or event
(or none at all), and judged over passes as the room's own targets are."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from vnetbench.errors import UserError
from vnetbench.model.topology import Topology, parse_topology
from vnetbench.runs.capacity import judge_step, parse_slo, slo_problems


def test_a_phase_s_or_an_event_s_target_judges_its_series() -> None:
    clauses = parse_slo("p99@steady=50ms,failed@end-rush=0,last@statement=10s,"
                        "unfinished@statement=0,p99=80ms")
    assert [(c.metric, c.bound, c.kind) for c in clauses] == [
        ("room_phase_p99_ms_steady", 50.0, "time"), ("room_phase_failed_end-rush", 0.0, "count"),
        ("room_burst_last_ms_statement", 10_000.0, "time"),
        ("room_burst_unfinished_statement", 0.0, "count"), ("room_p99_ms", 80.0, "time")]


@pytest.mark.parametrize(("text", "said"), [
    ("p95@steady=50ms", "'p95@steady=50ms' is not a target"),
    ("last@Statement=1s", "'last@Statement=1s' is not a target"),
    ("p99@=1s", "is not a target"),
    ("fairness@steady=0.9", "is not a target"),
    ("last@statement=soon", r"'soon' is not a value for last@statement \(e.g. 50ms\)"),
    ("unfinished@statement=-1", "machines are counted in whole numbers from 0"),
    ("failed@steady=0.5", "failed requests are counted in whole numbers from 0"),
    ("p99@steady=5ms,p99@steady=9ms", "p99@steady is given twice")])
def test_a_wrong_phase_target_is_one_paragraph_naming_its_part(text: str, said: str) -> None:
    with pytest.raises(UserError, match=said):
        parse_slo(text)


def test_the_unknown_target_says_the_per_phase_form() -> None:
    with pytest.raises(UserError, match=r"KEY@PHASE, KEY one of p50, p99, max, failed"):
        parse_slo("p98=1ms")


def topology(workload: Any = "contest") -> Topology:
    return parse_topology({"name": "t", "switches": 2, "agents": 2, "workload": workload},
                          "t")


def test_phases_and_events_named_must_be_the_workload_s() -> None:
    clauses = parse_slo("p99@steady=50ms,p99@lunch=50ms,last@statement=5s,last@steady=5s")
    assert slo_problems(clauses, topology(), "machines") == [
        "p99@lunch: the workload has no phase lunch (its phases: statement, steady, "
        "end-rush)",
        "last@steady: the workload has no at-once event steady (its at-once events: "
        "statement)"]
    plain = slo_problems(parse_slo("p99@steady=50ms,p99=9ms"), topology(None), "machines")
    assert plain == ["p99@steady: the topology has no workload, so no phase steady; give "
                     "the room a workload (the topology's workload:, or --workload "
                     "contest), or a target of the whole room"]


def test_a_rate_search_under_a_workload_is_refused() -> None:
    said = slo_problems(parse_slo("p99=50ms"), topology(), "rate")
    assert said == ["--by rate: a workload sets each kind's own rate, so room_rate would "
                    "change nothing; search --by machines, or leave the workload out"]
    assert slo_problems(parse_slo("p99=50ms"), topology(None), "rate") == []


def rows(**values: float) -> pd.DataFrame:
    """A pass's rows as results hold them: a phase's or an event's in its column."""
    records = []
    for name, value in values.items():
        metric, _, part = name.partition("__")
        dimension = "event" if metric.startswith("room_burst") else "phase"
        records.append({"metric": metric, "value": value, "state": "ok", "status": "ok",
                        "phase": part if dimension == "phase" else "",
                        "event": part if dimension == "event" else ""})
    return pd.DataFrame(records)


def test_a_step_is_judged_per_phase_a_figure_the_median_a_count_the_worst_pass() -> None:
    clauses = parse_slo("p99@steady=50ms,failed@steady=0,last@statement=10s")
    three = pd.concat([rows(room_phase_p99_ms__steady=p99, room_phase_failed__steady=failed,
                            room_phase_p99_ms__statement=500.0,
                            room_burst_last_ms__statement=last)
                       for p99, failed, last in ((12.0, 0, 4000.0), (80.0, 0, 12_000.0),
                                                 (20.0, 1, 5000.0))])
    met, said, _ = judge_step(three, clauses)
    assert said.startswith("p99@steady 20 ms, failed@steady 1, last@statement 5000 ms")
    assert not met and "failed@steady 1 > 0" in said
    assert "last@statement" not in said.split("missed")[1]
    met, said, _ = judge_step(three[three.metric != "room_phase_failed"],
                              parse_slo("p99@steady=50ms,last@statement=10s"))
    assert met, said
