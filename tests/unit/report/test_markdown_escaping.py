"""report.md shows the data it embeds as text: rendered as Markdown (the `markdown`
package, which mkdocs brings), no tag from the data is live, on a recorded results
directory (tests/data/results-quick) carrying hostile text in every field, and on
any text at all (Hypothesis)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path

import markdown as python_markdown
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from vnetbench.analysis.results import CSV, PARQUET, load_results
from vnetbench.core.outcome import State
from vnetbench.core.schema import REMARK, STATE, STATUS
from vnetbench.report.markdown import build_report, escaped_table, inline
from vnetbench.report.tables import markdown

LOG_LINE = "handshake failed <img src=x onerror=alert(1)> after 5 s"
REMARK_TEXT = "MTU <script>alert(2)</script> & [click](javascript:alert(3))"
NAME = "wg`<b onmouseover=alert(4)>`|x\\"


class Tags(HTMLParser):
    """Every start tag of a page with its attributes, and its text."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def rendered(text: str) -> Tags:
    tags = Tags()
    tags.feed(python_markdown.markdown(text, extensions=["tables"]))
    return tags


def hostile(directory: Path) -> Path:
    """The recorded results with a failed pass whose status is a log line, a remark,
    a variant name and the header's facts all carrying HTML and Markdown."""
    frame = load_results(directory)
    frame.loc[0, [STATE, STATUS]] = [State.FAILED.value, LOG_LINE]
    frame[REMARK] = REMARK_TEXT
    frame["variant"] = NAME
    frame.to_parquet(directory / PARQUET, index=False)
    (directory / CSV).unlink(missing_ok=True)
    header = json.loads((directory / "run.json").read_text())
    header["machine"]["cpu_model"] = "<iframe src=//evil>"
    header["overlays"]["baseline"]["version"] = LOG_LINE
    header["calibration"] = {"error": REMARK_TEXT}
    (directory / "run.json").write_text(json.dumps(header))
    renamed = directory.with_name("run-<svg onload=alert(5)>")
    shutil.move(directory, renamed)
    return renamed


def test_report_md_embeds_no_live_tag_from_its_data(
        data_copy: Callable[[str], Path]) -> None:
    directory = hostile(data_copy("results-quick"))
    path, _ = build_report(directory)
    page = rendered(path.read_text())
    names = {tag for tag, _ in page.tags}
    assert not names & {"script", "iframe", "svg", "b"}, names
    for tag, attributes in page.tags:
        assert not [a for a in attributes if a.startswith("on")], (tag, attributes)
        if tag == "img":  # the plots, and only them
            assert (directory / str(attributes["src"])).is_file()
        if tag == "a":  # links to raw files: relative, no scheme
            assert ":" not in str(attributes["href"]), attributes
    text = "".join(page.text)
    for shown in (LOG_LINE, "<script>alert(2)</script>", "[click](javascript:alert(3))",
                  "<iframe src=//evil>", "run-<svg onload=alert(5)>"):
        assert shown in text  # shown as text, not dropped


SYNTAX = st.text(alphabet="<>&`[]()!\\|*_:/=\"' \nab", max_size=40)
PLAIN_TAGS = {"p", "code", "em", "strong"}


@settings(max_examples=400, deadline=None)
@given(SYNTAX, SYNTAX)
def test_any_text_around_a_code_span_stays_text(before: str, after: str) -> None:
    page = rendered(inline(f"{before} `vnetbench calibrate` {after}"))
    assert {tag for tag, _ in page.tags} <= PLAIN_TAGS
    assert all(not attributes for _, attributes in page.tags)


@settings(max_examples=200, deadline=None)
@given(st.lists(SYNTAX, min_size=2, max_size=2), st.lists(SYNTAX, min_size=2, max_size=2))
def test_any_text_in_a_table_stays_text(columns: list[str], row: list[str]) -> None:
    frame = pd.DataFrame([row], columns=[f"{i}{c}" for i, c in enumerate(columns)])
    page = rendered(markdown(escaped_table(frame)))
    table_tags = {"table", "thead", "tbody", "tr", "th", "td"}
    assert {tag for tag, _ in page.tags} <= PLAIN_TAGS | table_tags
    cells = [a for tag, a in page.tags if tag in ("td", "th")]
    assert len(cells) == 4  # no pipe of the data made another cell
