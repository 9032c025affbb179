"""report.md: the report's blocks (vnetbench/report/document.py) as Markdown, with
PNG plots (vnetbench/report/plots.py) beside it."""

from __future__ import annotations

from pathlib import Path

from vnetbench.report.document import (
    Block,
    Bullets,
    Figures,
    Heading,
    RawFiles,
    Report,
    Table,
    Text,
    read_report,
)
from vnetbench.report.plots import (
    write_plots,
    write_room_cdf_plot,
    write_series_plots,
    write_timeline_plots,
)
from vnetbench.report.raw import RawCell
from vnetbench.report.tables import markdown
from vnetbench.rundir import write_text_atomic
from vnetbench.schema import METHOD

REPORT = "report.md"


def build_report(directory: Path, report: Report | None = None) -> tuple[Path, str]:
    """Write report.md and the plots; return the path and the summary table text."""
    report = report or read_report(directory)
    text = "\n".join(line for block in report.blocks for line in render(block, report))
    path = directory / REPORT
    write_text_atomic(path, text)
    return path, markdown(report.headline)


def render(block: Block, report: Report) -> list[str]:
    """A block's lines, a blank line after it."""
    match block:
        case Heading(text, level):
            return ["#" * level + " " + text, ""]
        case Text(text):
            return [text, ""]
        case Bullets(items):
            return [*(f"- {item}" for item in items), ""]
        case Table(frame):
            return [markdown(frame)]
        case Figures(method):
            return [*(f"![{p.stem}]({p.name})" for p in plots(report, method)), ""]
        case RawFiles(cells):
            return [*(raw_line(cell) for cell in cells), ""]
    raise TypeError(f"no Markdown for {block!r}")


def plots(report: Report, method: str | None) -> list[Path]:
    if method is None:
        return (write_plots(report.summary, report.directory)
                + write_timeline_plots(report.frame, report.directory)
                + [p for p in [write_room_cdf_plot(report.frame, report.directory)] if p])
    frame = report.frame
    return write_series_plots(frame[frame[METHOD] == method], report.directory, method)


def raw_line(cell: RawCell) -> str:
    what = f"{cell.scenario}/{cell.overlay}/{cell.variant} ({cell.run_id})"
    if cell.run_dir is None:
        return f"- {what}: not kept beside these results"
    files = ", ".join(f"[{p.name}]({p.as_posix()})" for p in cell.listed) or "no raw files"
    if cell.unlisted:
        files += f" and {cell.unlisted} more in the folder"
    return f"- {what}: [{cell.run_dir.as_posix()}/]({cell.run_dir.as_posix()}/): {files}"
