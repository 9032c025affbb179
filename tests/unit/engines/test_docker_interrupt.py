"""An interrupted engine call stops: the docker process `timeout` bounds is in a
process group of its own, which neither Ctrl-C nor a kill of `timeout` reaches."""

import os
import signal
import time
from pathlib import Path
from types import FrameType

import pytest
from python_on_whales.utils import run

import vnetbench.engines.docker  # noqa: F401  (installs the interruptible run)


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def test_an_interrupt_stops_the_bounded_call_it_lands_in(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    # as an engine call: timeout (its own process group) around the real program,
    # standing in for `docker compose up` (its pid written first)
    command = ["timeout", "-k", "5", "60", "sh", "-c", f"echo $$ > {pid_file}; exec sleep 60"]
    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 0.5)
    try:
        with pytest.raises(KeyboardInterrupt):
            run(command)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 10  # TERM first, KILL after vnetbench.engines.docker.STOP_SECONDS
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid), "the program the interrupted call ran is still running"
    assert os.getpgid(0) == os.getpgrp()  # our own group was not signalled
