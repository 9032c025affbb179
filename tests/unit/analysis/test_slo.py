"""`--slo` on run and matrix: targets on any metric of any scenario, parsed (bad ones
refused naming the clause, exit 2), checked per cell on the median of its measured
passes (recorded results: tests/data/results-named), printed as a table; a miss
exits 1 and is named."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.unit.terminal.test_exitstatus import NAMED, fake_run, recorded, with_states
from vnetbench.analysis.results import load_results
from vnetbench.analysis.slo import (
    Target,
    check_scenarios,
    check_targets,
    parse_targets,
    targets_table,
)
from vnetbench.cli import app
from vnetbench.core.outcome import State
from vnetbench.errors import UserError

runner = CliRunner()


def test_targets_name_a_scenario_a_metric_a_direction_and_a_bound() -> None:
    targets = parse_targets("throughput.tcp_mbit>=500, room.p99_ms<=50ms,"
                            "throughput.cpu_agent_percent<=80")
    assert targets == [Target("throughput", "tcp_mbit", True, 500.0, "Mbit/s"),
                       Target("room", "room_p99_ms", False, 50.0, "ms"),  # its own prefix
                       Target("throughput", "cpu_agent_percent", False, 80.0, "% of a core")]
    assert [t.text for t in targets] == ["throughput.tcp_mbit>=500", "room.room_p99_ms<=50",
                                         "throughput.cpu_agent_percent<=80"]


@pytest.mark.parametrize(("text", "said"), [
    ("throughput.tcp_mbit=500", "is not SCENARIO.METRIC>=VALUE"),
    ("warp.tcp_mbit>=1", "there is no scenario 'warp'"),
    ("throughput.tcp>=1", "throughput has no metric 'tcp'"),
    ("throughput.tcp_mbit>=fast", "'fast' is not a number for throughput.tcp_mbit"),
    ("throughput.tcp_mbit>=nan", "'nan' is not a number"),
    ("throughput.tcp_mbit>=5ms", "'5ms' is not a number"),  # not its unit
    ("throughput.tcp_mbit>=5,throughput.tcp_mbit>=6", "a second bound the same way"),
    (" , ", "--slo is empty"),
    # a figure that is never below zero: these targets decide nothing
    ("throughput.tcp_mbit>=0", "can never be missed"),
    ("room.p99_ms>=-5", "can never be missed"),
    ("throughput.tcp_mbit<=-1", "can never be met"),
])
def test_a_target_vnetbench_cannot_check_is_refused_naming_it(text: str, said: str) -> None:
    with pytest.raises(UserError, match=said):
        parse_targets(text)


def test_a_target_on_a_scenario_not_run_is_refused() -> None:
    targets = parse_targets("room.p99_ms<=50")
    with pytest.raises(UserError, match="room is not among what this run runs"):
        check_scenarios(targets, ["throughput"], "--slo", "this run")
    check_scenarios(targets, ["throughput", "room"], "--slo", "this run")


def test_each_cell_is_judged_on_its_median() -> None:
    """tcp_mbit: baseline 945 and 990 (median 967.5), WireGuard 727 and 762 (744)."""
    checked = check_targets(load_results(NAMED), parse_targets(
        "throughput.tcp_mbit>=800,room.p99_ms<=25"))
    verdicts = {(c.target.metric, c.overlay): (round(c.value or 0, 1), c.met) for c in checked}
    assert verdicts == {("tcp_mbit", "baseline"): (967.5, True),
                        ("tcp_mbit", "wireguard"): (744.2, False),
                        ("room_p99_ms", "baseline"): (21.5, True),
                        ("room_p99_ms", "wireguard"): (28.0, False)}
    table = targets_table(checked)
    assert list(table["verdict"]) == ["met", "MISSED", "met", "MISSED"]
    assert list(table["passes"]) == [2, 2, 2, 2]


def test_a_dead_cell_misses_and_a_cell_not_meant_to_run_is_not_judged() -> None:
    frame = with_states(load_results(NAMED), "throughput", "wireguard", {1, 2}, State.DEAD)
    frame = with_states(frame, "throughput", "baseline", {1, 2}, State.NOT_APPLICABLE)
    (checked,) = check_targets(frame, parse_targets("throughput.tcp_mbit>=1"))
    assert (checked.overlay, checked.value, checked.met) == ("wireguard", None, False)
    assert checked.describe() == "throughput.tcp_mbit>=1 on wireguard: no measured value"


@pytest.mark.parametrize("command", [["run", "throughput", "room"], ["matrix"]])
def test_a_missed_target_exits_1_names_it_and_a_met_one_exits_0(
        command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_run(monkeypatch, recorded(tmp_path))
    args = [*command, "--out", str(tmp_path / "out"), "--slo"]
    missed = runner.invoke(app, [*args, "throughput.tcp_mbit>=800,room.p99_ms<=50"],
                           env={"COLUMNS": "200"})
    said = " ".join(missed.output.split())
    assert missed.exit_code == 1, said
    assert "1 target(s) missed: throughput.tcp_mbit>=800 on wireguard: 744.2; exit 1" in said
    assert "MISSED" in said and said.count(" met ") == 3  # the table: every cell
    met = runner.invoke(app, [*args, "throughput.tcp_mbit>=500"], env={"COLUMNS": "200"})
    assert met.exit_code == 0, met.output
    assert "MISSED" not in met.output and "target(s) missed" not in met.output


def test_slo_is_refused_with_a_method_and_on_a_scenario_not_run(tmp_path: Path) -> None:
    for args, said in ((["run", "--method", "vpncloud", "--slo", "throughput.tcp_mbit>=1"],
                        "--slo with --method vpncloud"),
                       (["run", "throughput", "--slo", "room.p99_ms<=50"],
                        "room is not among what this run runs"),
                       (["matrix", "--slo", "transfer.upload_mbit>=1"],
                        "transfer is not among what the matrix runs")):
        result = runner.invoke(app, [*args, "--out", str(tmp_path)],
                               env={"DOCKER_HOST": "unix:///nonexistent"})
        assert result.exit_code == 2, result.output
        assert said in " ".join(result.output.split())
    assert not list(tmp_path.iterdir())


def test_targets_and_failed_passes_are_both_said(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    dead = with_states(load_results(NAMED), "room", "wireguard", {1}, State.DEAD)
    fake_run(monkeypatch, recorded(tmp_path, dead))
    result = runner.invoke(app, ["run", "throughput", "room", "--out", str(tmp_path / "o"),
                                 "--slo", "throughput.tcp_mbit>=500", "--allow-failed"])
    said = " ".join(result.output.split())
    assert result.exit_code == 0, said  # the target met, the dead pass allowed
    assert "room on wireguard: pass 1 path dead" in said


def test_a_target_on_a_difference_may_cross_zero() -> None:
    """Latency added under load is a difference (loaded less idle): a bound at or below
    zero can go either way, so it is taken."""
    (target,) = parse_targets("loaded_latency.one_way_added_p50_ms<=0")
    assert not target.at_least and target.bound == 0
