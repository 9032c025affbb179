"""transactions: request/response and connection rates between two agents on
different switches, as Cilium's CNI benchmark reports them (issue #26).

netperf TCP_RR (one connection, a 1-byte request and a 1-byte response back and
forth: transactions per second and their latency percentiles) and TCP_CRR (the
same over a new connection per transaction: handshake, request, response, close),
each for BENCH_SECONDS alone, then `rr_parallel` instances at once, one client
container each, started together: their rates summed, the worst instance's p99.
A netserver in the server's namespace serves them all. A few pings go first, to
tell a dead path from one where only netperf failed.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial

from vnetbench.core.outcome import Kind, Outcome, Problem, State, single
from vnetbench.declared.declaration import Values
from vnetbench.declared.transactions import DECLARATION, RR_TESTS, TransactionsSettings
from vnetbench.measure.netperf import (
    CLIENT_GRACE_SECONDS,
    CUT_MARGIN_S,
    NetperfResult,
    NetperfRun,
    Netserver,
    combined,
    netserver,
)
from vnetbench.measure.ping import PingResult, run_ping
from vnetbench.measure.probe import save_raw
from vnetbench.model.topology import Topology
from vnetbench.scenarios.base import Metrics, PassResult, ScenarioContext
from vnetbench.scenarios.pair import (
    PairScenario,
    declared_round_trip_s,
    pick_pair,
    with_last_log_lines,
)
from vnetbench.terminal.ui import waiting

LIVENESS_PINGS = 20  # before the tests: a dead path is told from netperf failing
LIVENESS_INTERVAL_S = 0.05
# The first test's grace beyond its length when no ping was answered: a path that
# carries TCP but not ICMP has its control connection in a few round trips, and TCP_RR
# (the first test) ends at its length (2.0 s for -l 2 here); a dead path's connect
# waited out the whole CLIENT_GRACE_SECONDS (16.1 s for a 1 s test)
UNANSWERED_GRACE_S = 5.0
UNANSWERED_ROUND_TRIPS = 5  # the control connection's exchanges before the test
CUT_TEST = "TCP_CRR"  # the test whose netserver waits out its own timer (netperf.py)


@dataclass(frozen=True)
class Rates:
    """One test (TCP_RR or TCP_CRR) with `instances` at once, combined."""

    test: str
    instances: int
    result: NetperfResult | None  # None: an instance failed, or none ran a transaction
    error: str | None

    @property
    def label(self) -> str:
        return self.test + (f" x{self.instances}" if self.instances > 1 else "")

    @classmethod
    def of(cls, test: str, runs: list[NetperfRun]) -> Rates:
        errors = [run.error for run in runs if run.result is None]
        results = [run.result for run in runs if run.result is not None]
        if errors:
            failed = f"{len(errors)} of {len(runs)} instances failed: " if len(runs) > 1 else ""
            return cls(test, len(runs), None, failed + str(errors[0]))
        rates = combined(results)
        if rates.transactions_per_s <= 0:
            return cls(test, len(runs), None, "netperf completed no transaction")
        return cls(test, len(runs), rates, None)


class Transactions(PairScenario):
    declaration = DECLARATION
    shares_stack = True  # its netperf servers and clients stopped when the pass ends

    def settings(self, topology: Topology) -> dict[str, object]:
        s = topology.settings
        parallel = s.of(TransactionsSettings).parallel
        return {"seconds": s.seconds, "rr_parallel": parallel, "tls": s.tls,
                "limits": s.limits, "encryption": s.encryption,
                "tunnel_mtu": s.tunnel_mtu or 0}

    def run_pass(self, context: ScenarioContext, pass_no: int) -> PassResult:
        client, server = pick_pair(context.topology, context.placement(), self.name)
        target = context.overlay.target_address(context.topology, context.plan, server.name)
        ping = run_ping(context.stack, context.container(client.name), target, LIVENESS_PINGS,
                        LIVENESS_INTERVAL_S, None, context.raw_dir / f"ping-pass{pass_no}.txt",
                        timeout_seconds=LIVENESS_PINGS * LIVENESS_INTERVAL_S + 10)
        rounds = self._rounds(context, client.name, server.name, target, pass_no,
                              ping.result.received if ping.result else 0)
        outcome = transactions_status(rounds, ping.result, ping.error)
        notes = []
        if outcome.state is State.DEAD:
            with_last_log_lines(context, outcome, pass_no, client, server)
            notes.append(outcome.status)
        return PassResult(rates_metrics(rounds), summary_of(rounds), outcome, notes)

    def _rounds(self, context: ScenarioContext, client: str, server: str, target: str,
                pass_no: int, answered: int) -> list[Rates]:
        """Each test alone, then `rr_parallel` at once; only the first when it failed
        and no ping was answered (the path is dead: the rest would wait out their
        bounds for nothing)."""
        settings, stack = context.topology.settings, context.stack
        counts = sorted({1, settings.of(TransactionsSettings).parallel})
        rounds: list[Rates] = []
        with netserver(stack, context.container(server), target,
                       f"{stack.rendered.project}-netserver-{pass_no}") as serving:
            for instances in counts:
                for test in RR_TESTS.values():
                    grace = (unanswered_grace_s(context.topology) if answered == 0
                             and not rounds else CLIENT_GRACE_SECONDS)
                    with waiting(f"pass {pass_no}: {test} x{instances} {client} → {server} "
                                 f"({target})", settings.seconds):
                        rounds.append(run_at_once(serving, context.container(client), test,
                                                  instances, settings.seconds, context,
                                                  pass_no, grace))
                    if rounds[0].result is None and answered == 0:
                        return rounds
        return rounds


def unanswered_grace_s(topology: Topology) -> float:
    """The first test's grace when no ping was answered: UNANSWERED_GRACE_S and a few
    of the path's declared round trips, the whole grace where the topology cannot say
    the path (pair.declared_round_trip_s)."""
    round_trip_s = declared_round_trip_s(topology)
    if round_trip_s is None:
        return float(CLIENT_GRACE_SECONDS)
    return min(float(CLIENT_GRACE_SECONDS),
               UNANSWERED_GRACE_S + UNANSWERED_ROUND_TRIPS * round_trip_s)


def run_at_once(server: Netserver, client: str, test: str, instances: int, seconds: float,
                context: ScenarioContext, pass_no: int,
                grace_s: float = CLIENT_GRACE_SECONDS) -> Rates:
    """`instances` clients of one test, each its own probe container, started together;
    a TCP_CRR test's netserver children cut short once the clients' test is over
    (netperf.CRR_CUTTER), what they did kept beside the clients' output."""
    name = f"netperf-{test.lower()}-pass{pass_no}" + (f"-x{instances}" if instances > 1 else "")

    def one(index: int) -> NetperfRun:
        suffix = f"-{index + 1}" if instances > 1 else ""
        return server.run(client, test, seconds, context.raw_dir / f"{name}{suffix}.txt",
                          grace_s)

    cutter = (server.cut_when_done(seconds, instances, cut_margin_s(context.topology))
              if test == CUT_TEST else None)
    pool = ThreadPoolExecutor(max_workers=instances)
    try:
        rates = Rates.of(test, list(pool.map(one, range(instances))))
    finally:  # never wait here: on Ctrl-C the teardown ends the clients' probes
        pool.shutdown(wait=False, cancel_futures=True)
    if cutter is not None:
        save_raw(context.raw_dir / f"{name}-cut.txt", cutter.said())
    return rates


def cut_margin_s(topology: Topology) -> float:
    """How long after its length a TCP_CRR test's netserver child is cut short: the
    margin and the control connection's exchanges before the client's timer starts, at
    the path's declared round trip; twice the margin where the topology cannot say the
    path."""
    round_trip_s = declared_round_trip_s(topology)
    if round_trip_s is None:
        return 2 * CUT_MARGIN_S
    return CUT_MARGIN_S + UNANSWERED_ROUND_TRIPS * round_trip_s


def metric_prefix(rates: Rates) -> str:
    return next(prefix for prefix, test in RR_TESTS.items() if test == rates.test)


def rates_metrics(rounds: list[Rates]) -> Metrics:
    """Alone: the rate and every latency figure; at once: the summed rate and the
    worst instance's p99 (of their `instances`). None where a round failed."""
    values: Values = {}
    for rates in rounds:
        prefix, r = metric_prefix(rates), rates.result
        if rates.instances > 1:
            at_once = partial(DECLARATION.series, instances=rates.instances)
            values[at_once(f"{prefix}_parallel_tps")] = r.transactions_per_s if r else None
            values[at_once(f"{prefix}_parallel_p99_us")] = r.p99_us if r else None
            continue
        values[f"{prefix}_tps"] = r.transactions_per_s if r else None
        for figure in ("p50", "p90", "p99", "max", "mean"):
            values[f"{prefix}_{figure}_us"] = getattr(r, f"{figure}_us") if r else None
    return DECLARATION.emitted(values)


def summary_of(rounds: list[Rates]) -> dict[str, float | int | str | None]:
    """The RESULT line: each round's rate, and the single runs' p99."""
    summary: dict[str, float | int | str | None] = {}
    for rates in rounds:
        key = metric_prefix(rates) + (f"_x{rates.instances}" if rates.instances > 1 else "")
        summary[f"{key}_tps"] = round(rates.result.transactions_per_s) if rates.result else None
        if rates.instances == 1:
            summary[f"{key}_p99_us"] = rates.result.p99_us if rates.result else None
    return summary


def transactions_status(rounds: list[Rates], ping: PingResult | None,
                        ping_error: str | None) -> Outcome:
    """DEAD when no round completed a transaction and no ping was answered (as
    throughput's path_status); FAILED when a round failed on a path that answers;
    else OK (the pings only tell the two apart: an ICMP-deaf path that carries TCP
    is measured)."""
    answered = ping.received if ping else 0
    sent = ping.transmitted if ping else 0
    failed = [r for r in rounds if r.result is None]
    if len(failed) == len(rounds) and answered == 0:
        error = next((r.error for r in failed if r.error), None) or ping_error
        return single(State.DEAD, Kind.DEAD, (
            f"path dead: {answered} of {sent} pings answered, no transaction completed"
            + (f" ({error})" if error else "")))
    return Outcome(State.FAILED, [Problem(Kind.FAILED, f"{r.label} failed: {r.error}")
                                  for r in failed]) if failed else Outcome()
