"""transactions: what it declares (its settings, metrics, matrix variants, help line);
it measures in vnetbench/scenarios/transactions.py."""

from __future__ import annotations

from pydantic import Field

from vnetbench.core.metrics import Better, Metric
from vnetbench.core.model import Measured, ScenarioSettings
from vnetbench.declared.declaration import EVERY, Declaration, PingCdf

# transactions: netperf's request/response tests, alone, then `{instances}` at once
# (rr_parallel; their rates summed, the worst instance's p99)
RR_TESTS = {"tcp_rr": "TCP_RR", "tcp_crr": "TCP_CRR"}
TRANSACTIONS = tuple(metric for prefix, test in RR_TESTS.items() for metric in (
    Metric(f"{prefix}_tps", "transactions/s", Better.HIGHER, f"{test} (transactions/s)",
           lead=True),
    Metric(f"{prefix}_p50_us", "µs", Better.LOWER, f"{test} latency, p50 (µs)"),
    Metric(f"{prefix}_p90_us", "µs", Better.LOWER, label=f"{test} latency, p90 (µs)"),
    Metric(f"{prefix}_p99_us", "µs", Better.LOWER, f"{test} latency, p99 (µs)", noisy=True),
    Metric(f"{prefix}_max_us", "µs", Better.LOWER, label=f"{test} latency, max (µs)",
           noisy=True),
    Metric(f"{prefix}_mean_us", "µs", Better.LOWER, label=f"{test} latency, mean (µs)"),
    Metric(f"{prefix}_parallel_tps", "transactions/s", Better.HIGHER,
           f"{test}, {{instances}} at once (transactions/s, summed)",
           display=f"{prefix}_tps_x{{instances}}"),
    Metric(f"{prefix}_parallel_p99_us", "µs", Better.LOWER,
           f"{test}, {{instances}} at once: the worst p99 (µs)", noisy=True,
           display=f"{prefix}_p99_us_x{{instances}}")))

class TransactionsSettings(ScenarioSettings):
    prefix = "rr_"
    # netperf instances at once in the parallel round, each its own container
    parallel: Measured[int] = Field(4, ge=1, le=32,
                                    description="transactions: netperf instances at once "
                                    "(1: no parallel round).")


DECLARATION = Declaration(
    name="transactions",
    description=("netperf TCP_RR and TCP_CRR between two agents on different switches: "
                 "transactions/s and latency, alone and several at once"),
    metrics=TRANSACTIONS,
    runtime="vnetbench.scenarios.transactions:Transactions",
    settings=TransactionsSettings,
    # the measured pair under load, once: ~4 x 3 s of netperf (TCP_CRR returns ~4 s
    # late), ~3 x 3 s of pings (~25 s and ~20 s an overlay); `run` gives them passes
    variants={EVERY: {"default": {"passes": 1, "seconds": 3}}},
    # its liveness pings before the rounds
    figures=(PingCdf("cdf-transactions",
                     "transactions: ping round trips, a line per pass (CDF)"),),
)
