"""The matrix: every available scenario, in the seed's settings, on every
available overlay, several passes each, into one results directory.

results/<date>-<cores>cpu/ holds results.parquet/.csv (all cells), run.json
(the machine header and every cell's state), results.txt (RESULT lines) and
runs/<run id>/ (each cell's compose file, raw output and logs). Results are
written pass by pass; --resume skips the cells already complete.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import pandas as pd

from vnetbench.engine import require_engine
from vnetbench.images import build_project_images
from vnetbench.metadata import load_header, now_iso, results_header, save_header
from vnetbench.overlays import OVERLAY_NAMES, Overlay, overlay_for
from vnetbench.results import PARQUET, ResultSet
from vnetbench.scenarios import SCENARIOS, Scenario
from vnetbench.session import run_scenarios
from vnetbench.topology import Topology
from vnetbench.ui import job_progress, note

QUICK_SETTINGS = {"seconds": 2, "pings": 50, "passes": 3}


@dataclass(frozen=True)
class Cell:
    scenario: Scenario
    overlay: Overlay
    variant: str
    overrides: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.scenario.name}/{self.overlay.name}/{self.variant}"


def plan_cells(overlays: list[Overlay], scenarios: list[Scenario]) -> list[Cell]:
    """Every scenario variant with every overlay variant, for the pairs that apply.
    A pair an overlay *build* does not support still gets its cells: they record
    "not supported" rows (without starting anything), so the report says so."""
    cells = []
    for scenario in scenarios:
        for overlay in overlays:
            if (overlay.supports(scenario.name) or "").startswith("not applicable"):
                continue
            for s_name, s_over in scenario.matrix_variants().items():
                for o_name, o_over in overlay.matrix_variants(scenario.name).items():
                    variant = "-".join(n for n in (s_name, o_name) if n != "default")
                    cells.append(Cell(scenario, overlay, variant or "default",
                                      {**s_over, **o_over}))
    return cells


def available_overlays(base: Topology, names: list[str] | None = None) -> list[Overlay]:
    """The configured adapters that can run here (each asks the engine once)."""
    chosen = [overlay_for(base, n) for n in (names or OVERLAY_NAMES)]
    ready = []
    for overlay in chosen:
        reason = overlay.unavailable_reason()
        if reason:
            note(f"[yellow]skipping overlay {overlay.name}: {reason}[/]")
        else:
            ready.append(overlay)
    return ready


def matrix_directory(root: Path, resume: bool) -> Path:
    base = root / f"{date.today().isoformat()}-{os.cpu_count()}cpu"
    if resume or not base.exists():
        return base
    suffix = 2
    while (root / f"{base.name}-{suffix}").exists():
        suffix += 1
    return root / f"{base.name}-{suffix}"


def finished_cells(directory: Path, passes: int) -> set[str]:
    path = directory / PARQUET
    if not path.exists():
        return set()
    frame = pd.read_parquet(path)
    counts = frame.groupby(["scenario", "overlay", "variant"])["pass"].nunique().reset_index()
    complete = counts[counts["pass"] >= passes]
    return {f"{r.scenario}/{r.overlay}/{r.variant}" for r in complete.itertuples()}


def cell_topology(base: Topology, cell: Cell, quick: bool) -> Topology:
    settings = {**base.settings.model_dump(), **(QUICK_SETTINGS if quick else {}),
                **cell.overrides}
    return Topology.model_validate({**base.model_dump(), "overlay": cell.overlay.name,
                                    "settings": settings})


def run_matrix(base: Topology, root: Path, quick: bool = False, resume: bool = False,
               overlay_names: list[str] | None = None) -> Path:
    require_engine()
    build_project_images()
    overlays = available_overlays(base, overlay_names)
    cells = plan_cells(overlays, list(SCENARIOS.values()))
    directory = matrix_directory(root, resume)
    directory.mkdir(parents=True, exist_ok=True)
    passes = cell_topology(base, cells[0], quick).settings.passes if cells else 0
    done = finished_cells(directory, passes) if resume else set()
    previous = load_header(directory) if resume else {}
    header = {**results_header("matrix", overlays), "quick": quick,
              "cells": previous.get("cells", {})}
    header["started"] = previous.get("started") or header["started"]
    results = ResultSet.resume(directory) if resume else ResultSet("matrix", directory)
    todo = [c for c in cells if c.key not in done]
    note(f"matrix: {len(todo)} cell(s) to run, {len(done)} already done; results in {directory}")
    try:
        with job_progress("matrix", steps=len(todo) * passes):
            for cell in todo:
                header["cells"][cell.key] = "running"
                save_header(directory, header)
                results.variant = cell.variant
                topology = cell_topology(base, cell, quick)
                run_dir = run_scenarios(topology, [cell.scenario], directory / "runs",
                                        results=results, overlay=cell.overlay)
                header["cells"][cell.key] = f"completed ({run_dir.name})"
    except BaseException as error:
        running = [k for k, v in header["cells"].items() if v == "running"]
        for key in running:
            header["cells"][key] = f"stopped: {error or type(error).__name__}"
        raise
    finally:
        header["ended"] = now_iso()
        save_header(directory, header)
    return directory


