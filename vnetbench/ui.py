"""Console output: progress on stderr, results on stdout."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
)
from rich.progress_bar import ProgressBar
from rich.text import Text

err_console = Console(stderr=True)
out_console = Console(highlight=False, soft_wrap=True)


class ElapsedBarColumn(BarColumn):
    """A bar that fills with wall-clock time, for waits of known length."""

    def render(self, task: Task) -> ProgressBar:
        done = min(task.elapsed or 0.0, task.total or 0.0)
        return ProgressBar(total=task.total, completed=done, width=self.bar_width)


class ExpectedColumn(ProgressColumn):
    def render(self, task: Task) -> Text:
        return Text(f"of ~{task.total:.0f} s" if task.total else "")


@contextmanager
def waiting(description: str, expected_seconds: float | None = None) -> Iterator[None]:
    """Show a spinner (and a time bar when the length is known) while a wait lasts."""
    columns: list[ProgressColumn] = [SpinnerColumn(), TextColumn("{task.description}")]
    if expected_seconds:
        columns.append(ElapsedBarColumn())
    columns += [TimeElapsedColumn(), ExpectedColumn()]
    started = time.monotonic()
    with Progress(*columns, console=err_console, transient=True) as progress:
        progress.add_task(description, total=expected_seconds)
        yield
    err_console.print(f"[green]✓[/] {description} ({time.monotonic() - started:.1f} s)")


def note(message: str) -> None:
    err_console.print(message)
