"""netperf: request/response tests (TCP_RR, TCP_CRR) against a netserver, and their
omni output read.

The client asks for the omni output selectors in key=value form (`-- -k SEL,...`),
so the parser reads each figure by its name, not by a column's position; the
banner line before them is kept in the raw output only.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from vnetbench.measure.probe import (
    RunOnEngine,
    ToolRun,
    parsed,
    run_probe,
    save_raw,
    start_probe,
    stop_probe,
)

PORT = 12865  # netserver's own control port
SELECTORS = ("TRANSACTION_RATE", "P50_LATENCY", "P90_LATENCY", "P99_LATENCY",
             "MAX_LATENCY", "MEAN_LATENCY")
CLIENT_GRACE_SECONDS = 15  # beyond the test's length: a TCP_CRR test of 3 s took 7.2 s here
CONNECT_ATTEMPTS = 5  # while a netserver just started does not listen yet
REFUSED = "could not establish the control connection"
TIMED_OUT = 124  # timeout(1)'s exit status when it stopped the tool
_KEYVAL = re.compile(r"^([A-Z0-9_]+)=(.*)$")


@dataclass(frozen=True)
class NetperfResult:
    """One request/response test: transactions per second and their latencies (µs)."""

    transactions_per_s: float
    p50_us: float
    p90_us: float
    p99_us: float
    max_us: float
    mean_us: float


class NetperfError(Exception):
    """netperf ran but reported no figures (it could not connect, or was cut short)."""


def parse_netperf(text: str) -> NetperfResult:
    """The figures of `netperf ... -- -k SELECTORS`; NetperfError when any is missing."""
    values = {m[1]: m[2].strip() for line in text.splitlines()
              if (m := _KEYVAL.match(line.strip()))}
    missing = [s for s in SELECTORS if s not in values]
    if missing:
        what = "figures" if len(missing) == len(SELECTORS) else ", ".join(missing)
        last = " | ".join(line for line in text.strip().splitlines()[-2:])
        raise NetperfError(f"netperf reported no {what}: {last[:300] or 'no output'}")
    try:
        figures = [float(values[s]) for s in SELECTORS]
    except ValueError as error:
        raise NetperfError(f"netperf reported a figure that is no number ({error})") from None
    return NetperfResult(*figures)


def client_argv(target: str, test: str, seconds: float, port: int = PORT) -> list[str]:
    """A test of `seconds` against target's netserver, with the selectors' output."""
    return ["netperf", "-H", target, "-p", str(port), "-t", test, "-l", f"{seconds:g}",
            "--", "-k", ",".join(SELECTORS)]


NetperfRun = ToolRun[NetperfResult]


@dataclass(frozen=True)
class Netserver:
    """A netserver listening at address; it serves any number of tests."""

    run_on: RunOnEngine
    address: str
    port: int = PORT

    def run(self, client: str, test: str, seconds: float, raw_path: Path,
            grace_s: float = CLIENT_GRACE_SECONDS) -> NetperfRun:
        """One test from client's namespace, bounded by its length plus a grace."""
        argv = client_argv(self.address, test, seconds, self.port)
        bound = seconds + grace_s
        output, exit_code = "", 0
        for _ in range(CONNECT_ATTEMPTS):
            probe = run_probe(self.run_on, client, argv, bound)
            output = "\n".join(part for part in (probe.stdout, probe.stderr) if part)
            exit_code = probe.exit_code
            if REFUSED not in output:
                break
            time.sleep(0.3)
        save_raw(raw_path, output)
        run = parsed(output, parse_netperf, NetperfError)
        if run.result is None and exit_code == TIMED_OUT:
            return ToolRun(output, None, f"netperf had not finished after {bound:g} s and was "
                           f"stopped ({run.error})")
        return run


@contextmanager
def netserver(run: RunOnEngine, container: str, address: str, name: str,
              port: int = PORT) -> Iterator[Netserver]:
    """A netserver in container's namespace (reached at address), removed afterwards."""
    server = start_probe(run, container, ["netserver", "-D", "-p", str(port)], name=name)
    try:
        yield Netserver(run, address, port)
    finally:
        stop_probe(run, server)


def combined(results: list[NetperfResult]) -> NetperfResult:
    """Instances run at once as one: their rates summed, the worst of each percentile
    and maximum (the slowest instance's), the mean weighted by each one's rate."""
    rate = sum(r.transactions_per_s for r in results)
    mean = (sum(r.mean_us * r.transactions_per_s for r in results) / rate if rate
            else max(r.mean_us for r in results))
    return NetperfResult(rate, max(r.p50_us for r in results), max(r.p90_us for r in results),
                         max(r.p99_us for r in results), max(r.max_us for r in results), mean)
