"""`ab` confirms before alerting (vnetbench/analysis/sequential.py): the plan's boundary keeps
the false-alarm rate, a metric close to a verdict gets more rounds, and on sessions
simulated from the recorded A/A's noise (tests/confirm_simulation.py) the design
raises no more false verdicts than 8 fixed rounds and catches more 5 % cuts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from tests.confirm_simulation import measure
from vnetbench.analysis.results import ResultSet
from vnetbench.analysis.runrecord import RunRecord
from vnetbench.analysis.sequential import (
    exact_p_table,
    judge_sequentially,
    looks,
    null_minimum_p,
    plan_for,
)
from vnetbench.analysis.stats import Verdict, _ranks, signed_rank_p
from vnetbench.cli import app
from vnetbench.core.metrics import Better
from vnetbench.core.schema import ROUND, CellKey, Variant
from vnetbench.model.topology import load_topology
from vnetbench.report.ab import VERDICTS_FILE, verdict_summary
from vnetbench.runs.ab import Arm, ab_session, run_ab, schedule
from vnetbench.runtime.paths import TOPOLOGIES
from vnetbench.scenarios import get_scenario

runner = CliRunner()
PLAN = plan_for(8, 16)
# 8 rounds that a fixed design calls "worse": six 6 % cuts and two small rises, the
# smallest two ranks: W+ = 3, p = 10/256 = 0.039 (just under 0.05)
NEAR_THE_LINE = [-0.06, -0.06, -0.06, -0.06, -0.06, 0.01, -0.06, 0.02]


def sigma(alpha: float, sessions: int) -> float:
    return float(np.sqrt(alpha * (1 - alpha) / sessions))


def test_looks_every_four_rounds_up_to_the_maximum() -> None:
    assert looks(8, 16) == (8, 12, 16)
    assert looks(8, 18) == (8, 12, 16, 18)
    assert looks(8, 8) == (8,)
    assert PLAN.next_look(8) == 12 and PLAN.next_look(16) == 16


def test_one_look_is_the_fixed_test() -> None:
    # p < 0.05 at 8 pairs rejects p <= 10/256 exactly
    assert plan_for(8, 8).boundary_p == 10 / 256


def test_the_exact_p_table_is_the_tests_own_p() -> None:
    rng = np.random.default_rng(5)
    for n in (6, 8, 12, 16):
        for _ in range(20):
            d = rng.standard_normal(n)
            positive = int(_ranks(np.abs(d))[d > 0].sum())
            assert exact_p_table(n)[positive] == signed_rank_p(d)
    assert list(_ranks(np.array([3.0, 1.0, 2.0, 2.0]))) == [4.0, 1.0, 2.5, 2.5]


def test_the_boundary_keeps_five_percent_over_all_looks() -> None:
    # the exact null (any symmetric continuous noise), simulated apart from the
    # calibration's own paths: a verdict at any of the three looks at most 5 % of the time
    sessions = 40_000
    smallest = null_minimum_p(PLAN.looks, sessions, seed=2026)
    sequential = float((smallest <= PLAN.boundary_p).mean())
    assert sequential <= 0.05 + 2 * sigma(0.05, sessions)
    assert PLAN.boundary_p < 10 / 256  # stricter than one look's, as it must be
    # testing again at p < 0.05 at every look is what the plan avoids: it inflates
    repeated = float((smallest < 0.05).mean())
    assert repeated > 0.05 + 4 * sigma(0.05, sessions)


def test_a_p_just_under_005_after_8_rounds_is_confirmed_before_alerting() -> None:
    a = np.ones(16)
    for later, verdict, rounds in [([-0.06] * 8, Verdict.WORSE, 12),  # real: confirmed
                                   ([0.03, -0.03] * 4, Verdict.NO_CHANGE, 16)]:  # lucky
        b = np.exp(np.array(NEAR_THE_LINE + later))
        judgement = judge_sequentially(a, b, Better.HIGHER, 0.05, PLAN)
        assert (judgement.comparison.verdict, judgement.rounds) == (verdict, rounds)
        assert not judgement.close
    measured_8 = judge_sequentially(a[:8], np.exp(np.array(NEAR_THE_LINE)), Better.HIGHER,
                                    0.05, PLAN)
    assert measured_8.close and measured_8.comparison.verdict is Verdict.NO_CHANGE


def test_what_is_not_close_stops_at_the_first_look() -> None:
    a = np.ones(8)
    clear = np.exp(np.full(8, -0.10) + np.linspace(-0.01, 0.01, 8))  # p = 2/256
    flat = np.exp(np.array([0.01, -0.01] * 4) * np.arange(1, 9) / 8)  # p >= 0.5
    tiny = np.exp(np.array([-0.005, -0.004, -0.006, 0.001, -0.005, -0.003, 0.002,
                            -0.004]))  # p = 0.039, its interval within 5 %
    for b, verdict in [(clear, Verdict.WORSE), (flat, Verdict.NO_CHANGE),
                       (tiny, Verdict.NO_CHANGE)]:
        judgement = judge_sequentially(a, b, Better.HIGHER, 0.05, PLAN)
        assert (judgement.comparison.verdict, judgement.rounds, judgement.close) == (
            verdict, 8, False)


def test_recorded_a_a_noise_raises_no_more_false_verdicts_than_8_fixed_rounds() -> None:
    sessions = 1000
    bare = measure(1.0, 0.0, sessions)  # the test alone, no minimum effect to hide behind
    assert bare.sequential_verdicts <= 0.05 + 2 * sigma(0.05, sessions)
    gated = measure(1.0, 0.05, sessions // 2)  # as `ab` judges by default
    assert gated.sequential_verdicts <= gated.fixed_verdicts + 2 * sigma(0.05, sessions // 2)
    assert bare.sequential_mean_rounds < 12  # most A/As stop at the first look


def test_a_5_percent_cut_is_caught_with_the_right_sign_more_often() -> None:
    for min_effect, gain in [(0.02, 0.2), (0.05, 0.05)]:
        rates = measure(0.95, min_effect, 400, seed=3)
        assert rates.sequential_verdicts >= rates.fixed_verdicts + gain, rates
        assert rates.sequential_wrong_sign == rates.fixed_wrong_sign == 0


# --- the session: rounds added while a metric is close --------------------------------

def fake_session(monkeypatch: pytest.MonkeyPatch, log_ratios: list[float]) -> None:
    """`ab`'s bring-ups without an engine: each adds TCP for its arm and round, B/A of
    round r being exp(log_ratios[r - 1]) over a level that drifts between rounds."""
    monkeypatch.setattr("vnetbench.runs.ab.require_overlays",
                        lambda topology, names: {names[0]: object()})
    monkeypatch.setattr("vnetbench.runs.ab.new_record", lambda kind, overlays, **fields:
                        RunRecord.model_validate({"kind": kind, **fields}))

    def bring_up(topology: Any, scenarios: Any, runs: Path, results: ResultSet,
                 overlay: Any, variant: Variant) -> Path:
        round_no = int(variant.parameters[ROUND])
        value = 900 + 50 * np.sin(round_no)
        if variant.name == "B":
            value *= np.exp(log_ratios[round_no - 1])
        results.add(CellKey(f"round-{round_no}", "throughput", topology.overlay, variant), 1,
                    {"tcp_mbit": (float(value), "Mbit/s")}, {})
        results.write()
        return runs / f"round-{round_no}-{variant.name}"

    monkeypatch.setattr("vnetbench.runs.ab.run_scenarios", bring_up)


def session(tmp_path: Path, **options: Any) -> tuple[Path, dict[str, Any], pd.DataFrame]:
    """An A/B of 8 planned rounds: its directory, run.json and verdicts by metric."""
    topology = load_topology(TOPOLOGIES / "two-sites.yml")
    arms = [Arm("A", (), topology), Arm("B", ("backbone.rate=95mbit",), topology)]
    directory = run_ab(get_scenario("throughput"), arms, ab_session(8, **options),
                       tmp_path, 0.05)
    header = json.loads((directory / "run.json").read_text())
    return directory, header, pd.read_csv(directory / VERDICTS_FILE).set_index("metric")


def test_a_close_session_runs_more_rounds_and_says_so(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    fake_session(monkeypatch, NEAR_THE_LINE + [-0.06] * 8)
    directory, header, verdicts = session(tmp_path)
    assert header["rounds"] == 12 and header["confirm"]["looks"] == [8, 12, 16]
    assert [(s["round"], s["arm"]) for s in header["schedule"]][16:] == [
        (9, "A"), (9, "B"), (10, "B"), (10, "A"), (11, "A"), (11, "B"), (12, "B"),
        (12, "A")]  # the added rounds go on alternating
    assert verdicts.loc["tcp_mbit", "verdict"] == "worse"
    assert verdicts.loc["tcp_mbit", "rounds"] == 12
    shown, sentence, worse = verdict_summary(directory)
    assert list(shown["rounds"]) == [12] and worse
    assert "12 rounds (8 planned, up to 16 to confirm" in sentence


def test_no_confirm_is_the_fixed_design(tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    fake_session(monkeypatch, NEAR_THE_LINE + [-0.06] * 8)
    _, header, verdicts = session(tmp_path, confirm=False)
    assert header["rounds"] == 8 and header["confirm"] is None
    assert len(header["schedule"]) == 16
    assert (verdicts.loc["tcp_mbit", "verdict"], verdicts.loc["tcp_mbit", "rounds"]) == (
        "worse", 8)  # p = 0.039 carries it, as before


def test_a_clear_change_stops_at_the_planned_rounds(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    fake_session(monkeypatch, [-0.10] * 16)
    _, header, verdicts = session(tmp_path, max_rounds=20)
    assert header["rounds"] == 8 and header["confirm"]["looks"] == [8, 12, 16, 20]
    assert verdicts.loc["tcp_mbit", "rounds"] == 8


def test_a_random_order_runs_and_records_its_draw(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The bring-ups run in the order the seed draws, added rounds too, and run.json
    keeps order and seed, so the session's order can be drawn again."""
    fake_session(monkeypatch, NEAR_THE_LINE + [-0.06] * 8)
    _, header, _ = session(tmp_path, order="random")
    assert header["order"]["order"] == "random" and header["rounds"] == 12
    assert [(s["round"], s["arm"]) for s in header["schedule"]] == schedule(
        12, order="random", seed=header["order"]["seed"])


@pytest.mark.parametrize(("args", "said"), [
    (["--max-rounds", "101"], "--max-rounds 101: input should be less than or equal to 100"),
    (["--max-rounds", "5"], "--max-rounds 5: input should be greater than or equal to 6"),
    (["--max-rounds", "10", "--rounds", "12"], "--max-rounds 10 is below --rounds 12"),
])
def test_bad_maximum_rounds_are_one_paragraph(args: list[str], said: str) -> None:
    result = runner.invoke(app, ["ab", "throughput", *args],
                           env={"DOCKER_HOST": "unix:///nonexistent"})
    assert result.exit_code == 2, result.output
    assert said in " ".join(result.output.split()) and "Traceback" not in result.output
