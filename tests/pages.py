"""Reading a generated page as a browser's parser would: what it would fetch, its
headings, links, figure divs, tables and the figures' data."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser


class Page(HTMLParser):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text
        self.fetched: list[str] = []
        self.headings: list[str] = []
        self.links: list[str] = []
        self.figures: list[str] = []
        self.tables: list[list[list[str]]] = []
        self._heading = False
        self._cell: list[str] | None = None
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag in ("script", "img", "iframe") and found.get("src"):
            self.fetched.append(str(found["src"]))
        if tag == "link" and found.get("href"):
            self.fetched.append(str(found["href"]))
        if tag == "a" and found.get("href"):
            self.links.append(str(found["href"]))
        if tag == "div" and str(found.get("id", "")).startswith("figure-"):
            self.figures.append(str(found["id"]))
        self._heading = tag in ("h1", "h2", "h3")
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self.tables:
            self.tables[-1][-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        if self._heading and data.strip():
            self.headings.append(data.strip())
            self._heading = False

    def table_with(self, column: str) -> list[dict[str, str]]:
        """The first table with this column, as a dict per row."""
        for rows in self.tables:
            if rows and column in rows[0]:
                return [dict(zip(rows[0], row, strict=True)) for row in rows[1:]]
        raise AssertionError(f"no table with a column {column!r}")

    def figure_data(self, name: str) -> list[dict[str, object]]:
        """The traces a figure div is drawn with (the JSON the page hands to
        Plotly.newPlot: its data)."""
        found = re.search(rf'<script type="application/json" class="plotly-figure" '
                          rf'data-target="figure-{name}"[^>]*>(.*?)</script>', self.text, re.S)
        assert found is not None, f"no figure {name}"
        data: list[dict[str, object]] = json.loads(found.group(1))["data"]
        return data
