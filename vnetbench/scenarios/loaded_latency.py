"""loaded_latency: latency under load between two agents on different switches, as
RRUL measures it (issue #26).

Pings every 10 ms with arrival stamps (`ping -D -O`) for BENCH_SECONDS in three
phases: idle; while four TCP streams (iperf3 -P 4) saturate the path client to
server; while four go each way (iperf3 --bidir -P 4). The ping starts first and
the stream after it, both bounded. A loaded phase counts the probes *sent* while
the stream surely ran: after its latest possible start (its probe's return less
the test's length) and before its earliest possible end (its probe's launch plus
that length), read on the host's clock, the clock ping's stamps use on one host.
The headline is the latency added under load: a loaded phase's p50 (and p99)
less the idle p50.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, replace

from vnetbench.core.outcome import Kind, Outcome, State
from vnetbench.declared.declaration import Values
from vnetbench.declared.loaded_latency import DECLARATION, LOAD_PHASES
from vnetbench.measure.iperf import (
    IperfError,
    IperfResult,
    iperf_server,
    parse_iperf_bidir,
    parse_iperf_json,
)
from vnetbench.measure.ping import STAMPED_GRACE_SECONDS, run_stamped_ping
from vnetbench.measure.ping_window import (
    RttSummary,
    parse_probes,
    sent_between,
    summarise,
)
from vnetbench.measure.probe import ToolRun, parsed
from vnetbench.model.topology import Topology
from vnetbench.scenarios.base import Metrics, PassResult, ScenarioContext
from vnetbench.scenarios.pair import (
    PairScenario,
    path_status,
    pick_pair,
    stall_floor_mbit,
    with_last_log_lines,
)
from vnetbench.terminal.ui import waiting

PROBE_INTERVAL_S = 0.01
LOAD_STREAMS = 4
PING_LEAD_S = 0.5  # the ping runs before the stream is launched
STREAM_MARGIN_S = 1  # the stream runs this much longer than the pings it must cover
PING_TAIL_S = 1.0  # and the ping this much longer than the stream
# each loaded phase: iperf3's options and its report's parser
LOADS: dict[str, tuple[list[str], Callable[[str], IperfResult]]] = {
    "one_way": (["-P", str(LOAD_STREAMS)], parse_iperf_json),
    "both_ways": (["--bidir", "-P", str(LOAD_STREAMS)], parse_iperf_bidir),
}


@dataclass(frozen=True)
class Phase:
    name: str
    rtt: RttSummary
    stream: ToolRun[IperfResult] | None = None  # None: the idle phase

    @property
    def words(self) -> str:
        return LOAD_PHASES[self.name]


class LoadedLatency(PairScenario):
    declaration = DECLARATION
    shares_stack = True  # its pings and streams stopped when the pass ends

    def settings(self, topology: Topology) -> dict[str, object]:
        s = topology.settings
        return {"seconds": s.seconds, "ping_interval_ms": PROBE_INTERVAL_S * 1000,
                "load_streams": LOAD_STREAMS, "tls": s.tls, "limits": s.limits,
                "encryption": s.encryption, "tunnel_mtu": s.tunnel_mtu or 0}

    def run_pass(self, context: ScenarioContext, pass_no: int) -> PassResult:
        client, server = pick_pair(context.topology, context.placement(), self.name)
        target = context.overlay.target_address(context.topology, context.plan, server.name)
        phases = [self._idle(context, client.name, target, pass_no)]
        for load in LOADS:
            phases.append(self._loaded(context, client.name, server.name, target, load,
                                       pass_no))
            outcome = phases_status(phases, stall_floor_mbit(context.topology))
            if outcome.state is State.DEAD:  # the rest would wait out their bounds for nothing
                with_last_log_lines(context, outcome, pass_no, client, server)
                return PassResult(phases_metrics(phases), summary_of(phases), outcome,
                                  [outcome.status])
        return PassResult(phases_metrics(phases), summary_of(phases), outcome)

    def _idle(self, context: ScenarioContext, client: str, target: str,
              pass_no: int) -> Phase:
        seconds = context.topology.settings.seconds
        raw_path = context.raw_dir / f"ping-idle-pass{pass_no}.txt"
        with waiting(f"pass {pass_no}: pings every 10 ms {client} → {target}, idle", seconds):
            raw = run_stamped_ping(context.stack, context.container(client), target, seconds,
                                   PROBE_INTERVAL_S, raw_path)
        return Phase("idle", summarise(parse_probes(raw, PROBE_INTERVAL_S)))

    def _loaded(self, context: ScenarioContext, client: str, server: str, target: str,
                load: str, pass_no: int) -> Phase:
        """Pings started, then the stream; the pings sent while it surely ran."""
        stack, seconds = context.stack, context.topology.settings.seconds
        options, parse = LOADS[load]
        stream_s = seconds + STREAM_MARGIN_S
        ping_s = PING_LEAD_S + stream_s + PING_TAIL_S
        container, raw_dir = context.container(client), context.raw_dir
        label = (f"pass {pass_no}: pings every 10 ms {client} → {server} ({target}), "
                 f"{LOAD_PHASES[load]}")
        pool = ThreadPoolExecutor(max_workers=1)
        try:
            with iperf_server(stack, context.container(server), target,
                              f"{stack.rendered.project}-load-server-{pass_no}-{load}"
                              ) as iperf, waiting(label, ping_s):
                pinging = pool.submit(run_stamped_ping, stack, container, target, ping_s,
                                      PROBE_INTERVAL_S, raw_dir / f"ping-{load}-pass{pass_no}.txt")
                time.sleep(PING_LEAD_S)
                launched = time.time()
                raw = iperf.client_output(container, stream_s, options,
                                          raw_dir / f"iperf3-{load}-pass{pass_no}.json")
                returned = time.time()
                pings = ping_output(pinging, ping_s + STAMPED_GRACE_SECONDS + 30)
        finally:  # never wait here: on Ctrl-C the teardown ends the ping's probe
            pool.shutdown(wait=False, cancel_futures=True)
        stream = parsed(raw, parse, IperfError)
        start, end = surely_ran(launched, returned, stream.result)
        probes = sent_between(parse_probes(pings, PROBE_INTERVAL_S), start, end)
        return Phase(load, summarise(probes), stream)


def surely_ran(launched: float, returned: float, stream: IperfResult | None
               ) -> tuple[float, float]:
    """When a stream surely ran, on the host's clock: it started after its probe was
    launched and ended before it returned, and lasted `stream.seconds`; so from its
    latest possible start to its earliest possible end. Without a report: the probe's
    whole run (the phase has failed; its pings are kept as they were)."""
    if stream is None:
        return launched, returned
    return returned - stream.seconds, launched + stream.seconds


def ping_output(pinging: Future[str], bound_s: float) -> str:
    """The ping's output, or none when its probe outlived every bound (no probe sent
    while the stream ran is then counted: the phase has no figures)."""
    try:
        return pinging.result(timeout=bound_s)
    except FutureTimeout:
        return ""


def phases_metrics(phases: list[Phase]) -> Metrics:
    """Per phase: RTT p50, p99, max, loss and pings sent; per loaded phase its goodput
    and the latency it added (its p50 and p99 less the idle p50)."""
    idle_p50 = phases[0].rtt.at(0.5)
    values: Values = {}
    for phase in phases:
        rtt, name = phase.rtt, phase.name
        values |= {f"{name}_rtt_p50_ms": rtt.at(0.5),
                   f"{name}_rtt_p99_ms": rtt.at(0.99),
                   f"{name}_rtt_max_ms": rtt.max_ms,
                   f"{name}_ping_loss": rtt.loss_percent,
                   f"{name}_pings_sent": rtt.sent}
        if phase.stream is None:
            continue
        tcp = phase.stream.result
        values[f"{name}_load_mbit"] = tcp.receiver_mbit if tcp else None
        for q, share in ((50, 0.5), (99, 0.99)):
            loaded = rtt.at(share)
            added = loaded - idle_p50 if loaded is not None and idle_p50 is not None else None
            values[f"{name}_added_p{q}_ms"] = added
    return DECLARATION.emitted(values)


def summary_of(phases: list[Phase]) -> dict[str, float | int | str | None]:
    metrics = phases_metrics(phases)
    keys = ["idle_rtt_p50_ms", *(f"{load}_{figure}" for load in LOADS
                                 for figure in ("added_p50_ms", "load_mbit"))]
    return {key: (round(value, 3) if isinstance(value := metrics[key][0], float) else value)
            for key in keys if key in metrics}


def phases_status(phases: list[Phase], floor_mbit: float) -> Outcome:
    """Each loaded phase's stream against the idle pings, as throughput's path_status
    decides (DEAD: nothing delivered, no ping answered); the first phase not OK says
    why. A load that silences the pings is a measurement (its loss), said in the status."""
    idle = phases[0].rtt.as_ping_result()
    noted = Outcome()
    for phase in phases[1:]:
        stream = phase.stream
        outcome = path_status(stream.result if stream else None,
                              stream.error if stream else None, idle, None, floor_mbit)
        if outcome.state is State.DEAD:
            return outcome
        if outcome.state is not State.OK:  # the phase's words lead its first problem
            first, *rest = outcome.problems
            return Outcome(outcome.state, [replace(first, sentence=f"{phase.words}: "
                                                   f"{first.sentence}"), *rest])
        if phase.rtt.answered == 0:
            noted.add(Kind.NOTE, f"no ping answered {phase.words} ({phase.rtt.sent} sent "
                      "while the stream ran)")
    return noted
