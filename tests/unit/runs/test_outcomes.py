"""A pass's outcome is a state and typed problems; the status sentence composed from
them reads as it did when statuses were strings joined with "; " (the literals below
are what that code wrote for the same situations)."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pandas as pd

from vnetbench.analysis.results import ResultSet
from vnetbench.core.outcome import Kind, Outcome, Problem, State, compose, single
from vnetbench.core.schema import STATE, STATUS, CellKey
from vnetbench.measure.probe import ToolRun
from vnetbench.runs.outcomes import OUTSIDE_LOAD_SHARE, mark_outside_load, mark_shaping_changed
from vnetbench.runs.passes import write_pass
from vnetbench.scenarios.base import PassResult
from vnetbench.scenarios.join import JoinOutcome, result_of
from vnetbench.scenarios.transfer import transfer_status

BUSY = OUTSIDE_LOAD_SHARE * (os.cpu_count() or 1) * 3
LOAD_SAID = (f"measured under outside load: {BUSY:.2f} cores busy outside the testbed "
             "during the pass")


def test_no_problem_is_ok_and_an_addendum_alone_follows_ok() -> None:
    assert compose([]) == "ok" and Outcome().status == "ok"
    assert compose([Problem(Kind.UNMEASURED, "no tcp_retransmits: not counted", True)]) == (
        "ok; no tcp_retransmits: not counted")
    assert compose([Problem(Kind.PARTIAL, "partial: 1 of 2"),
                    Problem(Kind.UNMEASURED, "no x: y", True)]) == "partial: 1 of 2; no x: y"


def test_an_ok_pass_with_a_missing_figure_outside_load_and_a_remark(tmp_path: Path) -> None:
    """Throughput's `status += "; no ..."` on "ok", then the outside load joined with
    "; ", then the remark: one row's status, and the RESULT line's."""
    outcome = Outcome()
    outcome.add(Kind.UNMEASURED, "no cpu_switch_percent: 1 ended", addendum=True)
    result = PassResult({"tcp_mbit": (940.0, "Mbit/s")}, {"tcp_mbit": 940.0}, outcome)
    mark_outside_load(result, BUSY)
    results = ResultSet(tmp_path)
    write_pass(results, CellKey("run", "throughput", "wireguard"), 1, result, {},
               "tunnel_mtu 1380 lowered to 1360")
    expected = (f"ok; no cpu_switch_percent: 1 ended; {LOAD_SAID}; "
                "tunnel_mtu 1380 lowered to 1360")
    statuses = {row[STATUS] for row in results.rows}
    assert statuses == {expected}
    assert {row[STATE] for row in results.rows} == {"ok"}  # outside load does not fail it
    assert results.lines[-1].endswith("status=" + expected.replace(" ", "_"))
    assert [p.kind for p in result.outcome.problems] == [
        Kind.UNMEASURED, Kind.OUTSIDE_LOAD, Kind.REMARK]


def test_an_ok_pass_writes_no_status_in_its_result_line(tmp_path: Path) -> None:
    results = ResultSet(tmp_path)
    write_pass(results, CellKey("run", "throughput", "baseline"), 1,
               PassResult({"tcp_mbit": (940.0, "Mbit/s")}, {"tcp_mbit": 940.0}), {}, "")
    assert "status" not in results.lines[-1] and results.rows[0][STATUS] == "ok"


def test_a_partial_pass_whose_shaping_changed_fails_with_both_said() -> None:
    result = PassResult({}, {}, single(State.PARTIAL, Kind.PARTIAL,
                                       "partial: 19 of 20 joined within 30 s"))
    mark_shaping_changed(result, ["site: delay 10ms, found 0ms", "backbone: no qdisc"])
    assert result.status == ("partial: 19 of 20 joined within 30 s; shaping not as planned: "
                             "site: delay 10ms, found 0ms; backbone: no qdisc")
    assert result.state is State.FAILED and result.outcome.has(Kind.SHAPING)


def join(joined: int, total: int = 4, released: float | None = 100.0, gate_waiting: int = 0,
         quiet: bool = True) -> JoinOutcome:
    return JoinOutcome(total=total, joined={f"a{i}": pd.Timestamp(100.5, unit="s", tz="UTC")
                                            for i in range(joined)},
                       switches=Counter(switch1=joined), released_first=released,
                       released_last=released, gate_waiting=gate_waiting,
                       reasons=Counter({"log ends: [Agent] Connecting": total - joined}),
                       settle_s=5.0, quiet=quiet)


def test_a_partial_join_with_its_gate_and_a_busy_host() -> None:
    result = result_of(join(3, gate_waiting=1, quiet=False), 30)
    assert result.status == (
        "partial: 3 of 4 joined within 30 s (time is for those that joined); not joined: "
        "1 x log ends: [Agent] Connecting; 1 container(s) never left the gate; the host "
        "stayed busy: the gate opened after 5 s without a quiet moment")
    assert result.state is State.PARTIAL
    assert [p.kind for p in result.outcome.problems] == [Kind.PARTIAL, Kind.PARTIAL, Kind.NOTE]


def test_a_whole_join_on_a_busy_host_reads_ok_first() -> None:
    result = result_of(join(4, quiet=False), 30)
    assert result.state is State.OK
    assert result.status == "ok; the host stayed busy: the gate opened after 5 s without a " \
        "quiet moment"


def test_a_join_with_no_time_keeps_what_followed_its_reason() -> None:
    """The old text put the reason before the status it had, "ok; ..." included."""
    result = result_of(join(4, released=None, quiet=False), 30)
    assert result.state is State.FAILED and result.outcome.has(Kind.UNMEASURED)
    assert result.status == (
        "no release stamp in the agents' logs: the time from the release to the joins "
        "cannot be measured; ok; the host stayed busy: the gate opened after 5 s without "
        "a quiet moment")


def test_a_transfer_that_moved_nothing_says_dead_then_each_direction() -> None:
    runs = {"upload": ToolRun("", None, "socat: connection refused"),
            "download": ToolRun("", None, "the receiver counted no bytes")}
    outcome = transfer_status(runs, 120)
    assert outcome.state is State.DEAD
    assert outcome.status == ("path dead: 0 bytes moved either way; upload failed: socat: "
                              "connection refused; download failed: the receiver counted "
                              "no bytes")
    assert [p.kind for p in outcome.problems] == [Kind.DEAD, Kind.FAILED, Kind.FAILED]
