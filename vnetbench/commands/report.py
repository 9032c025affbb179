"""`vnetbench report`: a results directory's report.md (with plots) and report.html."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from vnetbench.commands.common import guarded
from vnetbench.terminal.ui import out_console


@guarded
def report(directory: Annotated[Path, typer.Argument(help="A results directory.")]) -> None:
    """Write report.md (machine header, ranges, n, CV, ratios) with PNG plots, and
    report.html (the same sections, interactive figures, one self-contained file),
    into DIR beside its results; nothing else in DIR is written over (a link or a
    directory in their place is refused)."""
    from vnetbench.report.document import read_report
    from vnetbench.report.html import HTML_REPORT, build_html
    from vnetbench.report.markdown import REPORT, build_report
    from vnetbench.terminal.outputs import Output, check_outputs, results_inputs

    read = read_report(directory)  # a directory that is none is said as such first
    check_outputs("report", [Output("", directory / name, ours=True)
                             for name in (REPORT, HTML_REPORT)], results_inputs([directory]))
    path, headline = build_report(directory, read)
    page = build_html(directory, read)
    out_console.print(headline)
    out_console.print(f"report: {path}", soft_wrap=True)
    out_console.print(f"report: {page}", soft_wrap=True)
