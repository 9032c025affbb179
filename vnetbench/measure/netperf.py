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
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as NotYet
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from vnetbench.engines.base import EngineError, ToolOutput
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

# A TCP_CRR test's netserver learns that the test ended only from its own timer, set
# to the test's length plus netperf's PAD_TIME (4 s): with a connection per
# transaction it waits in accept(), and the client waits for its results. So every
# TCP_CRR test took its length and 4 s (-l 2: 6.9 s here, 2026-12-07). Once the
# client's test must be over, each netserver child of the test is sent SIGALRM, what
# its own timer sends: it stops accepting and answers at once (4.3 s, the same rate).
# When: CUT_MARGIN_S after the child's start plus the test's length; the child starts
# when the client's control connection arrives, before the client's timer starts.
CUT_MARGIN_S = 1.0
CUT_WAIT_S = 2.0  # how long the client's end waits for the cutter's own end
# $1 the test's seconds, $2 the margin, $3 the children to cut, $4 the bound (seconds);
# the children: processes named netserver whose parent is the probe's PID 1
CRR_CUTTER = r"""
import os, signal, sys, time
length, margin, want, bound = map(float, sys.argv[1:5])
parent = sys.argv[5] if len(sys.argv) > 5 else "1"
tick = os.sysconf("SC_CLK_TCK")
def uptime():
    with open("/proc/uptime") as f:
        return float(f.read().split()[0])
def children():
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                name, _, rest = f.read().partition("(")[2].rpartition(")")
        except OSError:
            continue
        fields = rest.split()
        if name == "netserver" and fields[1] == parent:
            yield int(pid), int(fields[19]) / tick
time.sleep(length)
end, cut = uptime() + bound, set()
while len(cut) < want and uptime() < end:
    now, soonest = uptime(), 0.5
    for pid, began in children():
        left = began + length + margin - now
        if pid not in cut and left <= 0:
            os.kill(pid, signal.SIGALRM)
            cut.add(pid)
            print(f"cut netserver {pid} {now - began:.3f} s after it began", flush=True)
        elif pid not in cut:
            soonest = min(soonest, left)
    time.sleep(max(soonest, 0.01))
print(f"cut {len(cut)} of {want:g}")
"""


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
    container: str = ""  # the netserver's probe (none: its tests are never cut short)

    def cut_when_done(self, seconds: float, instances: int, margin_s: float) -> Cutter:
        """SIGALRM to each of the `instances` netserver children of the TCP_CRR test
        starting now, once its client's test of `seconds` must be over (CRR_CUTTER),
        from a thread (the engine's exec ends with the cutter)."""
        if not self.container:
            return Cutter(None, self)
        pool = ThreadPoolExecutor(max_workers=1)
        future = pool.submit(self.run_on.engine.execute, self.container, [
            "python3", "-c", CRR_CUTTER, f"{seconds:g}", f"{margin_s:g}", str(instances),
            f"{seconds + CLIENT_GRACE_SECONDS:g}"])
        pool.shutdown(wait=False)
        return Cutter(future, self)

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


@dataclass(frozen=True)
class Cutter:
    """A TCP_CRR test's cutter (Netserver.cut_when_done) while its clients run."""

    future: Future[ToolOutput] | None
    server: Netserver

    def said(self) -> str:
        """What it cut, once the clients have ended; a cutter still waiting (no client
        began: their errors say why) is stopped, so that it cuts no later test's."""
        if self.future is None:
            return "not cut: the netserver's probe is not known"
        try:
            done = self.future.result(timeout=CUT_WAIT_S)
        except NotYet:
            return f"not cut: no netserver child to cut within {CUT_WAIT_S:g} s" + (
                self.stopped())
        except EngineError as error:
            return f"not cut: {error}"
        return done.stdout + done.stderr

    def stopped(self) -> str:
        """The cutter stopped ('' when it was, else why not: the pass goes on, and its
        netserver, the cutter's container, is removed with the pass)."""
        try:
            self.server.run_on.engine.execute(self.server.container, ["pkill", "-x", "python3"])
        except EngineError as error:
            return f"; it could not be stopped ({error})"
        return ""


@contextmanager
def netserver(run: RunOnEngine, container: str, address: str, name: str,
              port: int = PORT) -> Iterator[Netserver]:
    """A netserver in container's namespace (reached at address), removed afterwards."""
    server = start_probe(run, container, ["netserver", "-D", "-p", str(port)], name=name)
    try:
        yield Netserver(run, address, port, server)
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
