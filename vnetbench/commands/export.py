"""`vnetbench export`: a results directory's figures for a CI benchmark dashboard."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from vnetbench.commands.common import guarded
from vnetbench.report.options import ExportFormat
from vnetbench.terminal.ui import err_console, note, out_console


@guarded
def export(
    directory: Annotated[Path, typer.Argument(help="A results directory.")],
    form: Annotated[ExportFormat, typer.Option(
        "--format", help="github: github-action-benchmark's custom tools (two files, one "
                         "per direction); bencher: Bencher Metric Format.")],
    out: Annotated[Path | None, typer.Option(
        "-o", "--out", help="The file, written whole (github: FILE-bigger-is-better.json "
                            "and FILE-smaller-is-better.json); bencher: '-' prints it. "
                            "Default: github.json / bencher.json in DIR; any other path "
                            "inside DIR is refused (it never writes over the results).")]
    = None,
    judge_all: Annotated[bool, typer.Option(
        "--all", help="Export the metrics declared noisy too (retransmits, mdev, CPU).")]
    = False,
) -> None:
    """A results directory's figures (mean over passes, lowest and highest pass) for a
    CI benchmark dashboard, each metric's direction from the metric catalogue."""
    from vnetbench.report.export import STDOUT, threshold_options, write_export

    written, found = write_export(directory, form, out, judge_all)
    for item in written:
        if item.path != STDOUT:
            out_console.print(f"{item.what}: {item.path}", soft_wrap=True)
    note(f"{len(found)} figures of {directory}")
    if form is ExportFormat.BENCHER:
        note("Bencher keeps each measure's direction in its threshold (bencher run "
             "options):")
        for line in threshold_options(found):
            err_console.print(f"  {line}", highlight=False, soft_wrap=True)
