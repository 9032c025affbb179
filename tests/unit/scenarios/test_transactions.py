"""transactions' rounds as data: metrics named and declared, the RESULT line, the
path's status (no engine). Recorded output: tests/data/netperf-*.txt, ping-*.txt."""

from __future__ import annotations

from pathlib import Path

import pytest

from vnetbench.core.outcome import Outcome, State
from vnetbench.declared import catalogue
from vnetbench.measure.netperf import NetperfError, parse_netperf
from vnetbench.measure.ping import parse_ping
from vnetbench.measure.probe import ToolRun, parsed
from vnetbench.model.topology import parse_topology
from vnetbench.scenarios import get_scenario
from vnetbench.scenarios.transactions import (
    Rates,
    rates_metrics,
    summary_of,
    transactions_status,
)


def run_of(data_dir: Path, name: str) -> ToolRun:  # type: ignore[type-arg]
    return parsed((data_dir / name).read_text(), parse_netperf, NetperfError)


def rounds(data_dir: Path, parallel_file: str = "netperf-tcp-rr.txt") -> list[Rates]:
    """TCP_RR and TCP_CRR alone, then each 3 at once (the recorded runs repeated)."""
    rr, crr = "netperf-tcp-rr.txt", "netperf-tcp-crr.txt"
    return [Rates.of("TCP_RR", [run_of(data_dir, rr)]),
            Rates.of("TCP_CRR", [run_of(data_dir, crr)]),
            Rates.of("TCP_RR", [run_of(data_dir, rr), run_of(data_dir, parallel_file),
                                run_of(data_dir, rr)]),
            Rates.of("TCP_CRR", [run_of(data_dir, crr)] * 3)]


def test_every_metric_is_declared_with_its_unit_and_direction(data_dir: Path) -> None:
    metrics = rates_metrics(rounds(data_dir))
    assert list(metrics) == [
        "tcp_rr_tps", "tcp_rr_p50_us", "tcp_rr_p90_us", "tcp_rr_p99_us", "tcp_rr_max_us",
        "tcp_rr_mean_us", "tcp_crr_tps", "tcp_crr_p50_us", "tcp_crr_p90_us",
        "tcp_crr_p99_us", "tcp_crr_max_us", "tcp_crr_mean_us", "tcp_rr_tps_x3",
        "tcp_rr_p99_us_x3", "tcp_crr_tps_x3", "tcp_crr_p99_us_x3"]
    declared = catalogue()
    for name, (_, unit) in metrics.items():
        metric = declared.find(name)
        assert metric is not None and metric.unit == unit, name
    assert declared.headline("tcp_crr_tps_x3") == (
        "TCP_CRR, 3 at once (transactions/s, summed)")
    assert declared.better("tcp_rr_p99_us_x3") == "lower"


def test_at_once_the_rates_are_summed_and_the_worst_p99_kept(data_dir: Path) -> None:
    metrics = rates_metrics(rounds(data_dir))
    assert metrics["tcp_rr_tps_x3"][0] == pytest.approx(3 * 120614.769)
    assert metrics["tcp_crr_p99_us_x3"][0] == 78
    assert summary_of(rounds(data_dir)) == {
        "tcp_rr_tps": 120615, "tcp_rr_p99_us": 9, "tcp_crr_tps": 24927, "tcp_crr_p99_us": 78,
        "tcp_rr_x3_tps": 361844, "tcp_crr_x3_tps": 74781}


def test_one_instance_failing_fails_its_round_with_its_error(data_dir: Path) -> None:
    done = rounds(data_dir, parallel_file="netperf-refused.txt")
    assert done[2].result is None
    assert done[2].error is not None and done[2].error.startswith("1 of 3 instances failed")
    assert rates_metrics(done)["tcp_rr_tps_x3"] == (None, "transactions/s")
    outcome = transactions_status(done, parse_ping((data_dir / "ping-20.txt")
                                                         .read_text()), None)
    state, status = outcome.state, outcome.status
    assert state is State.FAILED
    assert status.startswith("TCP_RR x3 failed: 1 of 3 instances failed: netperf reported no "
                             "figures: establish control: are you sure there is a netserver")


def test_nothing_completed_and_no_ping_answered_is_a_dead_path(data_dir: Path) -> None:
    refused = [Rates.of("TCP_RR", [run_of(data_dir, "netperf-refused.txt")])]
    dead = parse_ping((data_dir / "ping-dead.txt").read_text())
    outcome = transactions_status(refused, dead, None)
    state, status = outcome.state, outcome.status
    assert state is State.DEAD
    assert status.startswith("path dead: 0 of 5 pings answered, no transaction completed "
                             "(netperf reported no figures")
    # the same failure with pings answered: netperf failed on a path that carries
    alive = parse_ping((data_dir / "ping-20.txt").read_text())
    assert transactions_status(refused, alive, None).state is State.FAILED


def test_transactions_with_no_ping_answered_are_measured(data_dir: Path) -> None:
    """ICMP may not cross a path that carries TCP: the pings only tell dead from failed."""
    dead = parse_ping((data_dir / "ping-dead.txt").read_text())
    assert transactions_status(rounds(data_dir), dead, None) == Outcome()


def test_settings_shape_the_numbers_and_the_pair_is_checked() -> None:
    scenario = get_scenario("transactions")
    topology = parse_topology({"name": "t", "switches": 2, "agents": 2,
                               "settings": {"rr_parallel": 8, "seconds": 5}}, "t")
    assert scenario.settings(topology)["rr_parallel"] == 8
    assert scenario.settings(topology)["seconds"] == 5
    scenario.check(topology)
    with pytest.raises(Exception, match="The transactions scenario needs two agents"):
        scenario.check(parse_topology({"name": "t", "switches": 1, "agents": 1}, "t"))


def test_with_no_ping_answered_the_first_test_waits_its_round_trips_not_the_whole_grace(
        ) -> None:
    from vnetbench.measure.netperf import CLIENT_GRACE_SECONDS
    from vnetbench.scenarios.transactions import UNANSWERED_GRACE_S, unanswered_grace_s

    def topology(**extra: object):  # type: ignore[no-untyped-def]
        return parse_topology({"name": "t", "switches": 2, "agents": 2, **extra}, "t.yml")

    # a dead path (100 % loss) on an undelayed path: the connect's few round trips
    assert unanswered_grace_s(topology(links={"backbone": {"loss": "100%"}})) == \
        UNANSWERED_GRACE_S
    # 100 ms on the backbone: 5 round trips over 3 segments each way of the worst profile
    delayed = topology(links={"backbone": {"delay": "100ms"}})
    assert unanswered_grace_s(delayed) == pytest.approx(UNANSWERED_GRACE_S + 5 * 6 * 0.1)
    assert unanswered_grace_s(topology(links={"backbone": {"delay": "1s"}})) == \
        CLIENT_GRACE_SECONDS  # never more than the whole grace
    # a fault changes the path during the pass: the whole grace
    faulted = topology(faults=[{"at": "1s", "link": "backbone", "for": "1s"}])
    assert unanswered_grace_s(faulted) == CLIENT_GRACE_SECONDS
