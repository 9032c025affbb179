"""Each cell's run directory and raw tool output, found from the rows' run ids: a
matrix, sweep or A/B keeps DIR/runs/RUN_ID/, a single run is DIR itself. In a run
directory a scenario's raw output is in SCENARIO/raw/, a method's step in
STEP/raw/ or, when steps share a stack, FIRST-STEP/raw/STEP/, and matrix cells that
shared a stack in FIRST-SCENARIO/raw/SCENARIO-VARIANT/ (vnetbench/runs/passes.py
writes them so)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from vnetbench.analysis.runrecord import RunRecord
from vnetbench.core.schema import CELL, RUN_ID
from vnetbench.measure.ping_output import PingParseError, parse_ping
from vnetbench.runtime.rundir import slug

CELL_KEYS = [*CELL, RUN_ID]
PING_FILE = re.compile(r"^ping-pass(\d+)(?:-(\d+)b)?\.txt$")


RAW_FILES_LISTED = 12


@dataclass(frozen=True)
class RawCell:
    """One cell's run (a scenario, overlay and variant in one run directory)."""

    scenario: str
    overlay: str
    variant: str
    run_id: str
    run_dir: Path | None  # relative to the results directory; None: not kept there
    files: list[Path]  # the raw files, relative to the results directory

    @property
    def listed(self) -> list[Path]:
        """The files a report names; the rest are in the folder (a room keeps a record
        per machine and pass: hundreds)."""
        return self.files[:RAW_FILES_LISTED]

    @property
    def unlisted(self) -> int:
        return len(self.files) - len(self.listed)


@dataclass(frozen=True)
class PingSample:
    """One pass's ping round trips, read back from its raw ping output."""

    scenario: str
    overlay: str
    variant: str
    pass_no: int
    run_id: str
    size: int | None  # the payload when a pass pinged at several sizes
    path: Path  # relative to the results directory
    rtts_ms: tuple[float, ...]


def run_directory(directory: Path, run_id: str, record: RunRecord) -> Path | None:
    """Where the run of `run_id` was kept, if it is beside these results."""
    for candidate in (directory / "runs" / run_id, directory / run_id):
        if candidate.is_dir():
            return candidate
    if run_id and run_id in (record.run_id, directory.name):
        return directory
    return None


def raw_directory(run_dir: Path, scenario: str, variant: str) -> Path | None:
    """A cell's raw folder in its run directory: a matrix cell's on a stack it shared
    first, then a shared stack's step, then a step's own folder, then the scenario's."""
    step = slug(variant)
    candidates = [*sorted(run_dir.glob(f"*/raw/{slug(f'{scenario}/{variant}')}")),
                  *sorted(run_dir.glob(f"*/raw/{step}")), run_dir / step / "raw",
                  run_dir / scenario / "raw"]
    return next((c for c in candidates if c.is_dir()), None)


def cells(frame: pd.DataFrame) -> list[tuple[str, str, str, str]]:
    """The (scenario, overlay, variant, run id) of the rows, in their order."""
    if frame.empty:
        return []
    keys = frame[CELL_KEYS].astype(str).drop_duplicates()
    return [(s, o, v, r) for s, o, v, r in keys.itertuples(index=False)]


def raw_cells(directory: Path, frame: pd.DataFrame, record: RunRecord) -> list[RawCell]:
    """Every cell's run directory and raw files (relative paths), or that it is not kept."""
    found = []
    for scenario, overlay, variant, run_id in cells(frame):
        run_dir = run_directory(directory, run_id, record)
        raw = raw_directory(run_dir, scenario, variant) if run_dir else None
        files = sorted(p.relative_to(directory) for p in raw.iterdir()
                       if p.is_file()) if raw else []
        found.append(RawCell(scenario, overlay, variant, run_id,
                             run_dir.relative_to(directory) if run_dir else None, files))
    return found


def ping_samples(directory: Path, frame: pd.DataFrame,
                 record: RunRecord) -> list[PingSample]:
    """Each pass's round trips from the ping output kept under its run directory
    (none when the run directories are not beside the results)."""
    samples = []
    for cell in raw_cells(directory, frame, record):
        for path in cell.files:
            matched = PING_FILE.match(path.name)
            if not matched:
                continue
            try:
                parsed = parse_ping((directory / path).read_text(errors="replace"))
            except PingParseError:
                continue  # a ping that never ended has no replies to draw
            if parsed.rtts_ms:
                size = int(matched.group(2)) if matched.group(2) else None
                samples.append(PingSample(cell.scenario, cell.overlay, cell.variant,
                                          int(matched.group(1)), cell.run_id, size, path,
                                          parsed.rtts_ms))
    return samples
