"""`ab`'s confirmation measured on simulated sessions made from recorded noise (the
unit tests assert the rates; docs/ab.md publishes a larger run: `python -m
tests.confirm_simulation` from a checkout).

A session is one metric's pairs of rounds. Under "no change" a pair's log ratio B/A
is drawn from the recorded A/A's TCP throughput (tests/data/ab-aa-baseline: 6
rounds, one pass each, log ratios of SD 4.4 %) by a smoothed bootstrap (Gaussian
jitter of Silverman's bandwidth) with a random sign: in an A/A the arms are the
same build, so B/A and A/B are equally likely. An injected change multiplies B by
a fixed factor (0.95: a 5 % rate cut). The fixed design judges the first 8 rounds
at p < 0.05; the sequential one follows vnetbench/analysis/sequential.py from 8 rounds up
to 16.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from vnetbench.analysis.results import load_results
from vnetbench.analysis.sequential import SequentialPlan, judge_sequentially, plan_for
from vnetbench.analysis.stats import Verdict, compare_rounds
from vnetbench.core.metrics import Better
from vnetbench.report.ab import metric_rounds

AA = Path(__file__).parent / "data" / "ab-aa-baseline"
FIXED_ROUNDS = 8
MOST_ROUNDS = 16


def recorded_log_ratios(metric: str = "tcp_mbit") -> NDArray[np.float64]:
    """The recorded A/A's per-round log(B/A) of one metric."""
    found = next(m for m in metric_rounds(load_results(AA), judge_all=True)
                 if m.name == metric)
    return np.asarray(np.log(found.b / found.a), dtype=float)


def null_log_ratios(recorded: NDArray[np.float64], rng: np.random.Generator,
                    rounds: int) -> NDArray[np.float64]:
    """Pairs' log ratios under "no change": recorded sizes, smoothed, random signs."""
    bandwidth = 1.06 * recorded.std(ddof=1) * recorded.size ** -0.2
    sizes = np.abs(rng.choice(recorded, rounds) + bandwidth * rng.standard_normal(rounds))
    return np.asarray(rng.choice([-1.0, 1.0], rounds) * sizes, dtype=float)


@dataclass(frozen=True)
class Rates:
    """Of the simulated sessions: how many got the expected verdict (right sign for
    a change, any verdict for no change), the wrong sign, and the mean rounds."""

    sessions: int
    fixed_verdicts: float
    fixed_wrong_sign: float
    sequential_verdicts: float
    sequential_wrong_sign: float
    sequential_mean_rounds: float


def measure(change: float, min_effect: float, sessions: int, seed: int = 1,
            plan: SequentialPlan | None = None) -> Rates:
    """Both designs on the same simulated sessions; `change` is B's factor (1: none).
    A verdict counts as right when it is "worse" for a cut, "better" for a rise, and
    any verdict counts for no change (a false alarm)."""
    plan = plan or plan_for(FIXED_ROUNDS, MOST_ROUNDS)
    recorded = recorded_log_ratios()
    rng = np.random.default_rng(seed)
    right = Verdict.WORSE if change < 1 else Verdict.BETTER
    wrong = Verdict.BETTER if change < 1 else Verdict.WORSE
    fixed, sequential, rounds = [], [], []
    for _ in range(sessions):
        b = change * np.exp(null_log_ratios(recorded, rng, plan.most))
        a = np.ones_like(b)
        fixed.append(compare_rounds(a[:FIXED_ROUNDS], b[:FIXED_ROUNDS], Better.HIGHER,
                                    min_effect).verdict)
        judgement = judge_sequentially(a, b, Better.HIGHER, min_effect, plan)
        sequential.append(judgement.comparison.verdict)
        rounds.append(judgement.rounds)

    def share(verdicts: list[Verdict], kind: Verdict | None) -> float:
        hits = [v is not Verdict.NO_CHANGE if kind is None else v is kind for v in verdicts]
        return float(np.mean(hits))

    expected = None if change == 1 else right
    return Rates(sessions, share(fixed, expected), share(fixed, wrong),
                 share(sequential, expected), share(sequential, wrong),
                 float(np.mean(rounds)))


def table(sessions: int = 4000) -> str:
    """docs/ab.md's table: no change and injected changes, at two minimum effects."""
    lines = ["| B against A | --min-effect | fixed 8 rounds: verdicts | sequential 8-16: "
             "verdicts | mean rounds |", "|---|---|---|---|---|"]
    for change, said in [(1.0, "no change (A/A)"), (0.95, "5 % slower"),
                         (0.97, "3 % slower")]:
        for min_effect in (0.05, 0.02):
            rates = measure(change, min_effect, sessions)
            lines.append(f"| {said} | {100 * min_effect:g} % | "
                         f"{100 * rates.fixed_verdicts:.1f} % | "
                         f"{100 * rates.sequential_verdicts:.1f} % | "
                         f"{rates.sequential_mean_rounds:.1f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(table())
