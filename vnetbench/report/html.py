"""report.html: the report's blocks (vnetbench/report/document.py, the same as
report.md's) as one self-contained page with interactive figures.

Plotting library: Plotly (plotly.py). Its figures are JSON handed to plotly.js,
which the page carries inline (the `include_plotlyjs=True` bundle, written once
per page rather than once per figure), so the file opens from a disk, a CI
artefact or a mail attachment with no server and no network. Hover labels,
legend toggling, zoom and PNG download come with every figure without code of
ours; each trace is an SVG group a browser test can count. Bokeh's inline
resources would do as well; Plotly was chosen for its hover templates (a pass's
run id and settings in the label) and its long-kept Python API with no server
part."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from functools import cache
from pathlib import Path

import jinja2
import pandas as pd
from markupsafe import Markup, escape
from plotly.offline import get_plotlyjs

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
from vnetbench.report.figures import Figure, report_figures, series_figures
from vnetbench.report.raw import RawCell, ping_samples
from vnetbench.report.verdict import Verdict
from vnetbench.runtime.rundir import slug

HTML_REPORT = "report.html"
PLOT_CONFIG = {"displaylogo": False, "responsive": True}
FIGURE_HEIGHT = 450  # plotly's default, for a figure that sets none
_CODE = re.compile(r"`([^`]+)`")


@cache
def environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).parent),
                              autoescape=True, undefined=jinja2.StrictUndefined)


def page(title: str, body: Iterable[Markup], contents: list[Heading]) -> str:
    """A whole page: the style, plotly.js inline, a table of contents, the body."""
    return environment().get_template("page.html.j2").render(
        title=title, plotly_js=Markup(get_plotlyjs()), body=Markup("\n").join(body),
        contents=[(h.text, anchor(h.text)) for h in contents])


def build_html(directory: Path, report: Report | None = None) -> Path:
    """Write report.html beside the results; return its path."""
    report = report or read_report(directory)
    samples = ping_samples(directory, report.frame, report.record)
    figures = report_figures(report.frame, report.summary, samples)
    body = [render(block, report, figures) for block in report.blocks]
    path = directory / HTML_REPORT
    write_text_atomic(path, page(f"vnetbench results: {directory.name}", body, []))
    return path


def render(block: Block, report: Report, figures: list[Figure]) -> Markup:
    """A block of a report: its figures and contents where it says, the rest as
    render_block."""
    if isinstance(block, Figures):
        if block.method is not None:
            return figure_grid(list(series_figures(report.frame, block.method)))
        headline = block.plots is Plots.HEADLINE
        return figure_grid([f for f in figures if f.headline == headline])
    if isinstance(block, Contents):
        return contents_nav([b for b in report.blocks
                             if isinstance(b, Heading) and b.level == 2])
    return render_block(block)


def contents_nav(headings: list[Heading]) -> Markup:
    """The sections as links (the page's table of contents)."""
    links = Markup(" ").join(Markup("<a href=\"#{}\">{}</a>").format(anchor(h.text), h.text)
                            for h in headings)
    return Markup("<nav>") + links + Markup("</nav>")


def render_block(block: Block) -> Markup:
    match block:
        case Heading(text, level):
            return Markup(f"<h{level} id=\"{anchor(text)}\">{escape(text)}</h{level}>")
        case Text(text):
            return Markup(f"<p>{inline(text)}</p>")
        case Bullets(items):
            return Markup("<ul>" + "".join(f"<li>{inline(i)}</li>" for i in items) + "</ul>")
        case Verdicts(lines):
            return verdicts(lines)
        case Table(frame):
            return table(frame)
        case RawFiles(cells):
            return raw_table(cells)
    raise TypeError(f"no HTML for {block!r}")


def verdicts(lines: list[Verdict]) -> Markup:
    """The verdict lines, a miss (failed pass, missed target) marked as one."""
    items = Markup("").join(
        Markup("<li{}><strong>{}:</strong> {}</li>").format(
            Markup(" class=\"miss\"") if line.miss else "", line.subject, inline(line.text))
        for line in lines)
    return Markup("<ul class=\"verdicts\" id=\"verdicts\">") + items + Markup("</ul>")


def anchor(text: str) -> str:
    return slug(text) or "section"


def inline(text: str) -> Markup:
    """Escaped text with its `code` spans as <code>."""
    return Markup(_CODE.sub(r"<code>\1</code>", str(escape(text))))


def table(frame: pd.DataFrame) -> Markup:
    if frame.empty:
        return Markup("<p class=\"none\">(none)</p>")
    return Markup(frame.to_html(index=False, border=0, na_rep="-", classes="results",
                                escape=True))


def figure_grid(figures: list[Figure]) -> Markup:
    """Each figure as a div and its JSON, drawn once the page has loaded (none: said
    so)."""
    if not figures:
        return Markup("<p class=\"none\">(no figures: nothing was measured to draw)</p>")
    return Markup("<div class=\"figures\">") + Markup("").join(
        Markup("<div class=\"figure\">") + figure_div(f) + Markup("</div>") for f in figures
    ) + Markup("</div>")


def figure_div(figure: Figure) -> Markup:
    """An empty div of the figure's height and the figure as JSON beside it, which the
    page's loader (page.html.j2) hands to Plotly.newPlot once the page has loaded:
    plotly.js (4.8 MB) is compiled then, not before the summary is shown."""
    target = f"figure-{slug(figure.name)}"
    spec = figure.figure.to_json().replace("<", "\\u003c")  # no tag, no comment in it
    height = int(figure.figure.layout.height or FIGURE_HEIGHT)
    return Markup("<div id=\"{}\" class=\"plotly-graph-div\" style=\"height:{}px\"></div>"
                  "<script type=\"application/json\" class=\"plotly-figure\" "
                  "data-target=\"{}\" data-config=\"{}\">").format(
        target, height, target, json.dumps(PLOT_CONFIG)) + Markup(spec) + Markup("</script>")


def raw_table(cells: list[RawCell]) -> Markup:
    """A row per cell: its run directory and raw files as relative links."""
    rows = []
    for cell in cells:
        if cell.run_dir is None:
            where, files = Markup("not kept beside these results"), Markup("-")
        else:
            where = link(cell.run_dir.as_posix() + "/", cell.run_dir.as_posix() + "/")
            files = Markup(", ").join(link(p.as_posix(), p.name) for p in cell.listed) \
                or Markup("no raw files")
            if cell.unlisted:
                files += Markup(" and {} more in the folder").format(cell.unlisted)
        rows.append(Markup("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
                           "<td>{}</td></tr>").format(cell.scenario, cell.overlay,
                                                      cell.variant, cell.run_id, where, files))
    head = "".join(f"<th>{h}</th>" for h in ("scenario", "overlay", "variant", "run",
                                             "run directory", "raw files"))
    return Markup(f"<table class=\"results raw\"><thead><tr>{head}</tr></thead><tbody>") \
        + Markup("").join(rows) + Markup("</tbody></table>")


def link(href: str, text: str) -> Markup:
    return Markup("<a href=\"{}\">{}</a>").format(href, text)
