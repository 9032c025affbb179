"""Console output: progress on stderr, results on stdout.

One Rich progress display at a time: a long job (the matrix) opens it with
`job_progress`, and every `waiting()` inside shows as a line of it.

Nothing periodic runs while a measurement runs: the display is drawn when a phase
begins or ends (a wait added or removed, a step done), never by Rich's refresh
thread (ten redraws a second by default, a measurable load on a small machine
beside what is measured). So its spinner and clock stand still within a phase;
the line printed when a wait ends gives its seconds.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.progress_bar import ProgressBar
from rich.segment import Segment
from rich.text import Text

from vnetbench.files import escape_surrogates

# No markup: paths, names, messages and log lines reach these consoles, and a '[draft]'
# in them is text (styles are given as `style=` or `Text`, never in the string).


class GoneQuietConsole(Console):
    """A console whose reader went away (a broken pipe: the test runner or `| head`
    that read it ended) writes nothing more, and the run goes on to its teardown.
    Rich's default raises SystemExit there, which skipped a teardown that was about to
    print "tearing down" and left the run's containers behind."""

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        """The text with each surrogate shown escaped. A path given on the command line
        with a byte no UTF-8 decodes reaches Python as a surrogate ('\\udcff'); written
        as it is, it raised UnicodeEncodeError after the command's work was done, and
        Rich kept the text in its buffer, so every later print raised it again."""
        return escape_surrogates(super()._render_buffer(buffer))

    def on_broken_pipe(self) -> None:
        self.quiet = True
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self.file.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError):  # no descriptor (a test's buffer)
            pass


err_console = GoneQuietConsole(stderr=True, markup=False)
out_console = GoneQuietConsole(highlight=False, soft_wrap=True, markup=False)

_job: tuple[Progress, TaskID] | None = None

# How much goes to stderr besides errors: the root's -q (progress and notes dropped,
# warnings and errors kept) and -v (detail added: each wait as it begins, the
# environment variables in effect). Set once per invocation by commands/root.py.
QUIET, NORMAL, VERBOSE = -1, 0, 1
WARNING_STYLES = ("yellow", "red")  # a note in these is a warning: -q keeps it
verbosity = NORMAL


def set_verbosity(level: int) -> None:
    global verbosity
    verbosity = level


class TimeBarColumn(BarColumn):
    """A bar that fills with wall-clock time for waits of known length, or with
    completed steps for jobs counted in steps."""

    def render(self, task: Task) -> ProgressBar:
        if task.fields.get("timed"):
            done = min(task.elapsed or 0.0, task.total or 0.0)
            return ProgressBar(total=task.total, completed=done, width=self.bar_width)
        return super().render(task)


class RemainingColumn(ProgressColumn):
    """'of ~N s' for timed waits; Rich's estimate for counted jobs."""

    estimate = TimeRemainingColumn()

    def render(self, task: Task) -> Text:
        if task.fields.get("timed"):
            return Text(f"of ~{task.total:.0f} s" if task.total else "")
        if task.total:
            return Text("remaining ") + self.estimate.render(task)
        return Text("")


def _progress(transient: bool) -> Progress:
    """A display that redraws only when told to (no refresh thread)."""
    return Progress(SpinnerColumn(), TextColumn("{task.description}", markup=False),
                    TimeBarColumn(), TimeElapsedColumn(), RemainingColumn(), console=err_console,
                    transient=transient, auto_refresh=False)


@contextmanager
def waiting(description: str, expected_seconds: float | None = None) -> Iterator[None]:
    """Show a spinner (and a time bar when the length is known) while a wait lasts."""
    started = time.monotonic()
    if verbosity <= QUIET:
        yield
        return
    detail(f"… {description}")
    if _job is not None:
        progress, _ = _job
        task = progress.add_task(description, total=expected_seconds, timed=True)
        progress.refresh()
        try:
            yield
        finally:
            progress.remove_task(task)
            progress.refresh()
    else:
        with _progress(transient=True) as progress:
            progress.add_task(description, total=expected_seconds, timed=True)
            progress.refresh()
            yield
    err_console.print(Text.assemble(("✓", "green"), f" {description} "
                                    f"({time.monotonic() - started:.1f} s)"), highlight=False)


@contextmanager
def job_progress(description: str, steps: int) -> Iterator[None]:
    """One display for a whole job of `steps` steps (e.g. every pass of a matrix)."""
    global _job
    if verbosity <= QUIET:
        yield
        return
    with _progress(transient=False) as progress:
        _job = (progress, progress.add_task(description, total=steps))
        progress.refresh()
        try:
            yield
        finally:
            _job = None


def step_done(description: str | None = None) -> None:
    """Advance the job's bar by one step (a no-op outside a job)."""
    if _job is not None:
        progress, task = _job
        progress.advance(task)
        if description:
            progress.update(task, description=description)
        progress.refresh()


def note(message: str, style: str | None = None) -> None:
    """A line on stderr, as written (never read as markup), in `style` if given; -q
    drops it unless it is a warning (yellow or red)."""
    if verbosity <= QUIET and style not in WARNING_STYLES:
        return
    err_console.print(message, style=style, highlight=False)


def detail(message: str) -> None:
    """A line on stderr only under -v/--verbose."""
    if verbosity >= VERBOSE:
        err_console.print(message, style="dim", highlight=False, soft_wrap=True)


# Control characters but the newline and the tab: an input echoed in a message (an
# ESC of `--fault 'kill=x\x1b[2J'`) would otherwise clear or recolour the terminal
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


# a run of text no path or value a user means is this long: a 5000-digit number echoed
# from the input, shown as its start and its length (the paragraph stays readable)
ECHOED_LIMIT = 240  # characters
# (its closing quote and punctuation kept: "'999...(5002 characters)' is not")
ECHOED = re.compile(rf"\S{{{ECHOED_LIMIT + 1},}}?(?=[\"'.,:;)]*(?:\s|$))")
ECHOED_START = 40
QUOTES = "'\"("


def shortened(found: re.Match[str]) -> str:
    text = found.group()
    return f"{text[:ECHOED_START]}...({len(text.lstrip(QUOTES))} characters)"


def error_line(message: str) -> Text:
    """'error: MESSAGE', the word in bold red, the message as written, its control
    characters shown escaped (\\x1b) rather than sent to the terminal, and a value
    echoed from the input longer than any meant (ECHOED_LIMIT) cut to its start and
    its length: every refusal prints through here."""
    shown = CONTROL.sub(lambda found: repr(found.group())[1:-1], ECHOED.sub(shortened, message))
    return Text.assemble(("error:", "bold red"), " ", shown)


def silence_consoles() -> None:
    """The terminal is gone (SIGHUP): write nothing more to it."""
    err_console.quiet = True
    out_console.quiet = True
