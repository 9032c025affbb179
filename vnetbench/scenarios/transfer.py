"""transfer: a fixed number of bytes uploaded, then downloaded, each timed to the
last byte (libp2p perf's method: `--upload-bytes`, then `--download-bytes`).

socat between the measured pair, counted by pv at the receiver (see
measure.transfer for why not iperf3 -n), each direction bounded by
transfer_timeout_s; every second's figure is kept as its own row of the results
(`interval_s`), so a plot shows the bytes over time per overlay.
"""

from __future__ import annotations

from vnetbench.core.outcome import Kind, Outcome, Problem, State
from vnetbench.core.units import format_bytes
from vnetbench.declared.transfer import DECLARATION, TRANSFER_DIRECTIONS, TransferSettings
from vnetbench.measure.probe import ToolRun
from vnetbench.measure.transfer import Transfer, run_transfer
from vnetbench.model.topology import Topology
from vnetbench.scenarios.base import Metrics, PassResult, Scenario, ScenarioContext, SeriesPoint
from vnetbench.scenarios.pair import pick_pair
from vnetbench.terminal.ui import waiting


class TransferScenario(Scenario):
    declaration = DECLARATION

    def check(self, topology: Topology) -> None:
        pick_pair(topology)

    def settings(self, topology: Topology) -> dict[str, object]:
        s, transfer = topology.settings, topology.settings.of(TransferSettings)
        return {"transfer_bytes": transfer.bytes, "timeout_s": transfer.timeout_s,
                "encryption": s.encryption, "tunnel_mtu": s.tunnel_mtu or 0}

    def run_pass(self, context: ScenarioContext, pass_no: int) -> PassResult:
        client, server = pick_pair(context.topology, context.placement())
        target = context.overlay.target_address(context.topology, context.plan, server.name)
        runs = {direction: self._transfer(context, client.name, server.name, target,
                                          pass_no, direction) for direction in TRANSFER_DIRECTIONS}
        metrics: Metrics = {}
        series: list[SeriesPoint] = []
        for direction, run in runs.items():
            metrics |= transfer_metrics(direction, run.result)
            series += transfer_series(direction, run.result)
        summary: dict[str, float | int | str | None] = {
            f"{d}_s": run.result.seconds if run.result else None for d, run in runs.items()}
        outcome = transfer_status(runs, context.topology.settings.of(TransferSettings).timeout_s)
        return PassResult(metrics, summary, outcome, series=series)

    def _transfer(self, context: ScenarioContext, client: str, server: str, target: str,
                  pass_no: int, direction: str) -> ToolRun[Transfer]:
        stack, transfer = context.stack, context.topology.settings.of(TransferSettings)
        count = transfer.bytes
        with waiting(f"pass {pass_no}: {direction} of {format_bytes(count)} "
                     f"{client} ↔ {server}", None):
            return run_transfer(stack, context.container(client),
                                context.container(server), target, count,
                                direction == "download", transfer.timeout_s,
                                context.raw_dir / f"transfer-{direction}-pass{pass_no}.txt")


def timed(transfer: Transfer | None) -> bool:
    """Finished, and timed: pv's clock (0.1 ms steps) read more than 0 at the last byte."""
    return transfer is not None and transfer.complete and transfer.seconds > 0


def transfer_metrics(direction: str, transfer: Transfer | None) -> Metrics:
    """Rate and time to the last byte, only for a transfer that finished and was timed."""
    done = timed(transfer)
    return DECLARATION.emitted({f"{direction}_mbit": transfer.mbit if done and transfer else None,
            f"{direction}_seconds": transfer.seconds if done and transfer else None,
            f"{direction}_bytes": transfer.done_bytes if transfer else None})


def transfer_series(direction: str, transfer: Transfer | None) -> list[SeriesPoint]:
    if transfer is None:
        return []
    return [point for interval in transfer.intervals for point in (
        SeriesPoint(name, value, DECLARATION.unit(name), interval.end_s)
        for name, value in ((f"{direction}_interval_mbit", interval.mbit),
                            (f"{direction}_interval_bytes", interval.bytes)))]


def transfer_status(runs: dict[str, ToolRun[Transfer]],
                    bound_s: float) -> Outcome:
    """OK when both finished; PARTIAL when one was cut short by its bound or failed;
    DEAD when nothing moved either way."""
    problems = []
    for direction, run in runs.items():
        if run.result is None:
            problems.append(f"{direction} failed: {run.error}")
        elif not run.result.complete:
            problems.append(
                f"{direction} not finished in {bound_s:g} s: {format_bytes(run.result.done_bytes)}"
                f" of {format_bytes(run.result.asked_bytes)} moved")
        elif not timed(run.result):
            problems.append(f"{direction} of {format_bytes(run.result.asked_bytes)} took no "
                            "time pv could count (0 s): no rate; give more transfer_bytes")
    moved = sum(run.result.done_bytes for run in runs.values() if run.result)
    if not moved:
        return Outcome(State.DEAD, [Problem(Kind.DEAD, "path dead: 0 bytes moved either way"),
                                    *(Problem(Kind.FAILED, p) for p in problems)])
    return Outcome(State.PARTIAL, [Problem(Kind.PARTIAL, p) for p in problems]) if problems \
        else Outcome()
