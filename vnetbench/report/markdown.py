"""report.md: the report's blocks (vnetbench/report/document.py) as Markdown, with
PNG plots (vnetbench/report/plots.py) beside it.

Every piece of text a block carries may hold data (status sentences, log lines,
remarks, names, paths), and Markdown passes HTML through: rendered, a log line's
`<img onerror=...>` would be live. So all text is escaped here as report.html
escapes it: HTML's special characters as entities, and what Markdown would read
as syntax of its own (backticks, brackets, backslashes, table pipes) made literal;
the blocks' own `code` spans stay code. Links point at percent-encoded paths."""

from __future__ import annotations

import html
import re
from pathlib import Path
from urllib.parse import quote

import pandas as pd

from vnetbench.core.schema import METHOD
from vnetbench.files import write_text_atomic
from vnetbench.report.document import (
    Block,
    Bullets,
    Contents,
    Figures,
    Heading,
    Plots,
    RawFiles,
    Report,
    Table,
    Text,
    Verdicts,
    read_report,
)
from vnetbench.report.plots import (
    write_bar_plots,
    write_line_plots,
    write_method_plots,
    write_scenario_plots,
)
from vnetbench.report.raw import RawCell, ping_samples
from vnetbench.report.tables import markdown, problems

REPORT = "report.md"


def build_report(directory: Path, report: Report | None = None) -> tuple[Path, str]:
    """Write report.md and the plots; return the path and the summary table text."""
    report = report or read_report(directory)
    text = "\n".join(line for block in report.blocks for line in render(block, report))
    path = directory / REPORT
    write_text_atomic(path, text)
    nothing_measured = report.headline.empty and not problems(report.frame).empty
    return path, NO_FIGURE if nothing_measured else markdown(report.headline)


NO_FIGURE = ("no pass gave a figure: report.md's 'Passes without numbers' says why for "
             "each pass")


def render(block: Block, report: Report) -> list[str]:
    """A block's lines, a blank line after it."""
    match block:
        case Heading(text, level):
            return ["#" * level + " " + inline(text), ""]
        case Text(text):
            return [inline(text), ""]
        case Bullets(items):
            return [*(f"- {inline(item)}" for item in items), ""]
        case Verdicts(lines):
            return [*(f"- **{literal(line.subject)}:** {inline(line.text)}" for line in lines),
                    ""]
        case Table(frame):
            return [markdown(escaped_table(frame))]
        case Figures(method, kind):
            return [*(f"![{literal(p.stem)}]({href(p.name)})"
                      for p in plots(report, method, kind)), ""]
        case Contents():
            return [*(f"- [{literal(h.text)}](#{anchor(h.text)})"
                      for h in sections(report)), ""]
        case RawFiles(cells):
            return [*(raw_line(cell) for cell in cells), ""]
    raise TypeError(f"no Markdown for {block!r}")


_CODE = re.compile(r"`([^`]+)`")  # the blocks' code spans, as report.html reads them
_NOT_IN_ANCHOR = re.compile(r"[^\w\- ]")
_MARKDOWN_SYNTAX = re.compile(r"([\\`\[\]])")
_PLAIN_CODE = re.compile(r"[^<>&\[\]\\]+")
_BLOCK_START = re.compile(r"^(\d*)([*+\-#.])")


def inline(text: str) -> str:
    """One paragraph of a block as Markdown that shows its data as text."""
    flat = " ".join(text.split())
    parts: list[str] = []
    end = 0
    for span in _CODE.finditer(flat):
        touching = 0 < end == span.start()  # `a``b`: Markdown would read one span
        parts += [literal(flat[end:span.start()]), code(span[1], touching)]
        end = span.end()
    written = "".join([*parts, literal(flat[end:])])
    # a list, heading or numbered item is read at a paragraph's start only
    return _BLOCK_START.sub(r"\1\\\2", written, count=1)


def literal(text: str) -> str:
    """Text outside code: HTML escaped, Markdown's own characters backslashed."""
    flat = " ".join(str(text).splitlines())
    return _MARKDOWN_SYNTAX.sub(r"\\\1", html.escape(flat, quote=False))


def code(content: str, touching: bool = False) -> str:
    """A code span: backticks when nothing in it could be read otherwise, else as
    HTML of ours with the content escaped."""
    if _PLAIN_CODE.fullmatch(content) and not touching:
        return f"`{content}`"
    return f"<code>{literal(content)}</code>"  # Markdown reads between HTML tags


def sections(report: Report) -> list[Heading]:
    return [b for b in report.blocks if isinstance(b, Heading) and b.level == 2]


def anchor(text: str) -> str:
    """A heading's id as GitHub makes it: lower case, punctuation dropped, each
    space a hyphen ("Overlay / baseline" -> overlay--baseline)."""
    return _NOT_IN_ANCHOR.sub("", text.strip().lower()).replace(" ", "-")


def href(path: str) -> str:
    """A relative link's target: percent-encoded, so no scheme and no syntax."""
    return quote(path, safe="/")


def escaped_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Every cell and column name as literal text (a table holds data)."""
    shown = frame.map(cell)
    shown.columns = [cell(column) for column in frame.columns]
    return shown


def cell(value: object) -> str:
    """A table cell's text: literal, and its pipes not read as the next cell."""
    return literal(str(value)).replace("|", "\\|")


def plots(report: Report, method: str | None, kind: Plots) -> list[Path]:
    if method is None and kind is Plots.HEADLINE:
        return write_bar_plots(report.summary, report.directory)
    if method is None:
        own = report.frame[report.frame[METHOD] == ""]
        samples = ping_samples(report.directory, own, report.record)
        return (write_scenario_plots(own, report.summary, samples, report.directory)
                + write_line_plots(report.summary, report.directory))
    frame = report.frame
    return write_method_plots(frame[frame[METHOD] == method], report.directory, method)


def raw_line(cell: RawCell) -> str:
    what = literal(f"{cell.scenario}/{cell.overlay}/{cell.variant} ({cell.run_id})")
    if cell.run_dir is None:
        return f"- {what}: not kept beside these results"
    files = ", ".join(f"[{literal(p.name)}]({href(p.as_posix())})"
                      for p in cell.listed) or "no raw files"
    if cell.unlisted:
        files += f" and {cell.unlisted} more in the folder"
    folder = cell.run_dir.as_posix() + "/"
    return f"- {what}: [{literal(folder)}]({href(folder)}): {files}"
