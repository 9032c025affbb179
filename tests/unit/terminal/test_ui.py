"""The progress display: drawn between phases, nothing periodic while a phase (a
measurement) waits."""

from __future__ import annotations

import io
import threading
import time

import pytest
from rich.console import Console
from rich.live import _RefreshThread

from vnetbench.terminal import ui


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> io.StringIO:
    """stderr as a terminal, so the display draws (into a buffer)."""
    screen = io.StringIO()
    monkeypatch.setattr(ui, "err_console", Console(file=screen, force_terminal=True,
                                                   width=100))
    return screen


def refresh_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if isinstance(t, _RefreshThread)]


def test_a_wait_draws_when_it_begins_and_nothing_while_it_lasts(
        terminal: io.StringIO) -> None:
    threads_before = threading.active_count()
    with ui.waiting("measuring throughput/wireguard pass 1", expected_seconds=5):
        assert "measuring throughput/wireguard pass 1" in terminal.getvalue()
        drawn = terminal.getvalue()
        time.sleep(0.35)  # Rich's default would redraw 3 times meanwhile
        assert terminal.getvalue() == drawn
        assert refresh_threads() == []
        assert threading.active_count() == threads_before
    assert "measuring throughput/wireguard pass 1 (0." in terminal.getvalue()  # its seconds


def test_a_job_redraws_at_each_phase_and_runs_no_refresh_thread(
        terminal: io.StringIO) -> None:
    with ui.job_progress("matrix", steps=2):
        assert ui._job is not None
        progress, _ = ui._job
        assert progress.live.auto_refresh is False
        with ui.waiting("bringing up wireguard", expected_seconds=30):
            drawn = terminal.getvalue()
            assert "bringing up wireguard" in drawn
            time.sleep(0.25)
            assert terminal.getvalue() == drawn and refresh_threads() == []
        ui.step_done("throughput/wireguard done")
        assert "throughput/wireguard done" in terminal.getvalue()
        drawn = terminal.getvalue()
        time.sleep(0.25)
        assert terminal.getvalue() == drawn and refresh_threads() == []


def test_a_console_whose_reader_left_goes_quiet_and_the_run_goes_on() -> None:
    """A pipe whose reading end is closed: Rich's own console raises SystemExit on the
    first write there (once skipping a teardown that printed "tearing down" first);
    ours goes quiet, points the descriptor at /dev/null and returns."""
    import os

    from vnetbench.terminal.ui import GoneQuietConsole

    read_end, write_end = os.pipe()
    os.close(read_end)
    stream = os.fdopen(write_end, "w")
    console = GoneQuietConsole(file=stream, force_terminal=False)
    console.print("tearing down")  # raised SystemExit with Rich's on_broken_pipe
    assert console.quiet
    console.print("and more")
    stream.write("x")
    stream.flush()  # the descriptor is /dev/null now: EPIPE no more
    stream.close()


def test_an_undecodable_name_is_printed_escaped_and_the_next_print_is_clean() -> None:
    """A byte no UTF-8 decodes, given on the command line, reaches Python as a
    surrogate. Written to a strict UTF-8 stream it raised UnicodeEncodeError, and Rich
    kept the text in its buffer, so every later print on that console raised too."""
    import io

    from vnetbench.terminal.ui import GoneQuietConsole

    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="utf-8", errors="strict", write_through=True)
    console = GoneQuietConsole(file=stream, force_terminal=False, markup=False,
                               highlight=False)
    console.print("wrote /tmp/\udcff\u2603 x and \ud800")
    console.print("next")
    assert raw.getvalue().decode("utf-8") == "wrote /tmp/\\xff\u2603 x and \\ud800\nnext\n"
