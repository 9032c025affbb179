"""The TCP_CRR cutter (netperf.CRR_CUTTER) on real processes of this machine: a
child named netserver, as the netserver probe forks one per test, is sent SIGALRM
once its test's length and the margin have passed since it began, not before."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from concurrent.futures import Future
from pathlib import Path

import pytest

from vnetbench.engines.base import EngineError, ToolOutput
from vnetbench.measure import netperf
from vnetbench.measure.netperf import CRR_CUTTER, Cutter, Netserver

# a test's netserver child: named netserver (its comm), it says when the alarm came
# (the monotonic clock, one for every process), as netserver's own catcher ends the
# test on it
CHILD = r"""
import signal, sys, time
with open("/proc/self/comm", "w") as comm:
    comm.write("netserver")
def alarm(number, frame):
    print(f"alarm {time.monotonic():.6f}", flush=True)
    sys.exit(0)
signal.signal(signal.SIGALRM, alarm)
time.sleep(10)
print("never cut", flush=True)
"""


def cutter(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", CRR_CUTTER, *args], capture_output=True,
                          text=True, timeout=20, check=True)


def test_a_child_is_cut_once_the_length_and_the_margin_have_passed() -> None:
    asked = time.monotonic()  # the child began after this
    child = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE, text=True)
    try:
        said = cutter("0.3", "0.4", "1", "5", str(os.getpid())).stdout
        out, _ = child.communicate(timeout=10)
    finally:
        child.kill()
    assert f"cut netserver {child.pid} " in said and said.endswith("cut 1 of 1\n"), said
    # its start is read in clock ticks (10 ms here): not before 0.7 s less a tick after
    # it began; the cutter wakes when the child is due, so well before its 10 s end
    assert out.startswith("alarm "), out
    assert 0.69 <= float(out.split()[1]) - asked < 5, out


def test_a_process_of_another_parent_is_left_alone_and_the_bound_ends_the_wait() -> None:
    child = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE, text=True)
    try:
        said = cutter("0", "0", "1", "0.5", "1").stdout  # its parent is not PID 1
        assert child.poll() is None  # still waiting for its alarm
    finally:
        child.kill()
    assert said == "cut 0 of 1\n", said


class Engine:
    def __init__(self, gone: bool = False) -> None:
        self.calls: list[tuple[str, list[str]]] = []
        self.gone = gone

    def execute(self, container: str, argv: list[str]) -> ToolOutput:
        self.calls.append((container, argv))
        if self.gone:
            raise EngineError("the engine answered 404: no such container", 1, "", "")
        return ToolOutput(0, "", "")


class Run:
    run_id = "r"

    def __init__(self, gone: bool = False) -> None:
        self.engine = Engine(gone)


def test_a_cutter_that_cut_nothing_is_stopped_so_no_later_test_is_cut(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The clients ended (they failed) and the cutter still waits for a child: it is
    stopped, or it would cut the next test's children in the same netserver."""
    monkeypatch.setattr(netperf, "CUT_WAIT_S", 0.05)
    run = Run()
    said = Cutter(Future(), Netserver(run, "10.0.2.2", container="ns")).said()  # type: ignore[arg-type]
    assert said.startswith("not cut: no netserver child to cut within")
    assert run.engine.calls == [("ns", ["pkill", "-x", "python3"])]


def test_a_cutter_that_cannot_be_stopped_is_said_not_raised(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The pass goes on (its netserver, the cutter's container, goes with it)."""
    monkeypatch.setattr(netperf, "CUT_WAIT_S", 0.05)
    said = Cutter(Future(), Netserver(Run(gone=True), "10.0.2.2", container="ns")).said()  # type: ignore[arg-type]
    assert said.startswith("not cut: no netserver child to cut within")
    assert said.endswith("; it could not be stopped (the engine answered 404: no such "
                         "container)")


def test_a_netserver_without_its_probe_is_never_cut(tmp_path: Path) -> None:
    server = Netserver(Run(), "10.0.2.2")  # type: ignore[arg-type]
    assert server.cut_when_done(2, 1, 1.0).said().startswith("not cut: ")
