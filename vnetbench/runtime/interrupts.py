"""Signals that end a run through its teardown, and the teardown shielded from them."""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from types import FrameType

from vnetbench.errors import Interrupted
from vnetbench.terminal.ui import silence_consoles

# Signals that end a run through its teardown: Ctrl-C (handled even when a
# non-interactive shell started vnetbench in the background with SIGINT ignored),
# a kill, a dropped SSH session (SIGHUP: the terminal is gone, so output goes
# nowhere from then on), Ctrl-\.
TEARDOWN_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)


def _raise_interrupted(signum: int, frame: FrameType | None) -> None:
    if signum == signal.SIGHUP:
        silence_consoles()
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Interrupted(f"signal {signal.Signals(signum).name}")


@contextmanager
def handling(numbers: tuple[signal.Signals, ...],
             handler: Callable[[int, FrameType | None], object] | int) -> Iterator[None]:
    """The signals go to handler for the `with` block, then back to what they were."""
    previous = {number: signal.signal(number, handler) for number in numbers}
    try:
        yield
    finally:
        for number, before in previous.items():
            signal.signal(number, before)


def teardown_guard() -> AbstractContextManager[None]:
    """Ctrl-C, SIGTERM, SIGHUP and SIGQUIT take the Ctrl-C path: `finally` blocks run."""
    return handling(TEARDOWN_SIGNALS, _raise_interrupted)


def shielded() -> AbstractContextManager[None]:
    """Ignore further Ctrl-C and teardown signals while tearing down."""
    return handling(TEARDOWN_SIGNALS, signal.SIG_IGN)


