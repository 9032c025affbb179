"""Events from logs: `docker logs --timestamps` lines matched against patterns.

The patterns come from the overlay (for vNet: its profile), per role; named
groups become the event's fields. Pool containers run several agent
processes and prefix each line with `<process>| `, so an event still names
the process that wrote it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from vnetbench.engines.base import Source
from vnetbench.files import write_atomic, write_parquet

TIMESTAMPED = re.compile(r"^(?P<time>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z) ?(?P<text>.*)$")
POOL_PREFIX = re.compile(r"^(?P<process>[A-Za-z0-9_.-]+)\| (?P<text>.*)$")
COLUMNS = ["time", "container", "role", "process", "event", "fields", "line"]



def compile_patterns(patterns: Mapping[str, str]) -> list[tuple[str, re.Pattern[str]]]:
    return [(event, re.compile(pattern)) for event, pattern in patterns.items()]


@dataclass(frozen=True)
class Line:
    time: str | None  # Docker's RFC 3339 timestamp, if the log has them
    process: str  # the pool member that wrote it, else the container's node
    text: str


def lines_of(source: Source) -> list[Line]:
    """A log's lines split into Docker's timestamp, the writing process and the text."""
    lines = []
    for raw in source.text.splitlines():
        stamped = TIMESTAMPED.match(raw)
        time, text = (stamped["time"], stamped["text"]) if stamped else (None, raw)
        pooled = POOL_PREFIX.match(text)
        process, text = (pooled["process"], pooled["text"]) if pooled else (source.node, text)
        lines.append(Line(time, process, text))
    return lines


def in_time_order(lines: list[Line]) -> list[Line]:
    """Docker interleaves stdout and stderr out of order; its timestamps trim trailing
    zeros of the fraction, so pad them before comparing (stable: untimed keep order)."""
    def key(line: Line) -> str:
        if line.time is None:
            return ""
        seconds, _, fraction = line.time.rstrip("Z").partition(".")
        return seconds + "." + fraction.ljust(9, "0")
    return sorted(lines, key=key)


def parse_lines(source: Source, patterns: Mapping[str, str]) -> list[dict[str, object]]:
    """Every line of one log that matches one of its role's patterns."""
    compiled = compile_patterns(patterns)
    rows: list[dict[str, object]] = []
    for line in lines_of(source):
        time, process, text = line.time, line.process, line.text
        for event, pattern in compiled:
            found = pattern.search(text)
            if found:
                rows.append({"time": time, "container": source.container, "role": source.role,
                             "process": process, "event": event,
                             "fields": found.groupdict(), "line": text})
                break
    return rows


def events_frame(sources: Iterable[Source],
                 patterns: Mapping[str, Mapping[str, str]]) -> pd.DataFrame:
    """One frame of events from many logs, in time order (untimed lines last)."""
    rows = [row for source in sources
            for row in parse_lines(source, patterns.get(source.role, {}))]
    frame = pd.DataFrame(rows, columns=COLUMNS)
    frame["time"] = pd.to_datetime(frame["time"], utc=True, format="ISO8601")
    return frame.sort_values("time", kind="stable", na_position="last").reset_index(drop=True)


def lookup_events(sources: Iterable[Source], patterns: Mapping[str, Mapping[str, str]],
                  role: str, event: str) -> pd.DataFrame:
    """The frame of one event of one role, matched with the overlay's pattern for it;
    empty when the overlay has no such pattern."""
    pattern = patterns.get(role, {}).get(event)
    if not pattern:
        return events_frame([], {})
    return events_frame(sources, {role: {event: pattern}})


def last_lines(source: Source, count: int = 3) -> list[str]:
    """A log's last lines without Docker's timestamps, to explain a failure."""
    lines = []
    for raw in source.text.splitlines()[-count:]:
        stamped = TIMESTAMPED.match(raw)
        lines.append(stamped["text"] if stamped else raw)
    return lines


def write_events(frame: pd.DataFrame, path: Path) -> None:
    """Parquet with the fields as JSON text (their keys differ per event)."""
    out = frame.assign(fields=frame["fields"].map(json.dumps))
    write_atomic(path, lambda temp: write_parquet(out, temp))
