"""The matrix: every scenario that declares variants (CELLS), in the seed's settings, on
every available overlay that can run it, several passes each, into one results
directory.

results/<date>-<cores>cpu/ holds results.parquet/.csv (all cells), run.json
(the machine header and every cell's state), results.txt (RESULT lines) and
runs/<run id>/ (each stack's compose file, raw output and logs: cells of one
shape on one overlay share a stack, runs/cells.py). Results are written pass by
pass; --resume skips the cells already complete.
"""

from __future__ import annotations

import fcntl
import os
import statistics
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Any

from vnetbench.analysis.results import PARQUET, ResultSet, load_results
from vnetbench.analysis.runrecord import RunRecord, new_record, read_record, recorded
from vnetbench.core.outcome import NotApplicable
from vnetbench.core.schema import CELL, MACHINES, METHOD, OVERLAY, PASS
from vnetbench.declared import DECLARATIONS
from vnetbench.declared.declaration import EVERY, Variants
from vnetbench.engines import HostRuntime, local, require_engine
from vnetbench.errors import EnvironmentProblem, UserError
from vnetbench.measure.veth import bare_rates
from vnetbench.methods import Method
from vnetbench.model.capabilities import Capability
from vnetbench.model.topology import Topology
from vnetbench.overlays import OVERLAY_NAMES, Overlay, overlay_for
from vnetbench.runs.cells import Cell, group_cells, run_group, summed_timings
from vnetbench.runs.method import run_method_into
from vnetbench.runtime.rundir import new_directory
from vnetbench.scenarios import SCENARIOS, Scenario
from vnetbench.terminal.ui import job_progress, note

# --quick's ceiling on each cell (a cell's own lower value stands). 2 passes: the fewest
# that give a figure a range and a CV (report/tables.py: none for n < 2), where the
# third only narrowed them; 2 s streams and 50 pings (0.5 s at 10 ms) as before, now
# also for the cells that set their own 3 s (transactions, loaded_latency, the room)
QUICK_SETTINGS = {"seconds": 2, "pings": 50, "passes": 2}
LOCK_FILE = ".matrix.lock"

# The cells: scenario -> overlay -> its variants, as each scenario declares them
# (vnetbench/declared/). A scenario that declares none runs by name or in a
# method only (transfer: the libp2p-perf method's; the matrix's time budget is the
# seed's).
CELLS: Mapping[str, Mapping[str, Variants]] = {
    d.name: d.variants for d in DECLARATIONS if d.variants}


def plan_cells(overlays: list[Overlay], scenarios: list[Scenario],
               quick: bool = False) -> list[Cell]:
    """The table's cells of the scenarios and overlays given, for the pairs that apply
    (with `quick`, a sweep of sizes at its smallest). A pair an overlay *build* does not
    support still gets its cells: they record "not supported" rows (without starting
    anything), so the report says so."""
    cells = []
    for scenario in (s for s in scenarios if s.name in CELLS):
        rows = CELLS[scenario.name]
        for overlay in overlays:
            if isinstance(scenario.applicability(overlay), NotApplicable):
                continue
            variants = rows.get(overlay.name, rows.get(EVERY, {}))
            if quick:
                variants = smallest_size(variants)
            cells += [as_built(Cell(scenario, overlay, name, dict(overrides)))
                      for name, overrides in variants.items()]
    return cells


def smallest_size(variants: Variants) -> Variants:
    """Variants that differ only in their machines (join's n20, n50...: a sweep of
    sizes) reduced to the fewest machines, as --quick runs them: each overlay's figure
    at one size instead of its curve (vNet's four sizes took 60 of --quick's 964 s, and
    every overlay's n50 another 47); other variants stand."""
    if len(variants) < 2 or any(set(o) != {MACHINES} for o in variants.values()):
        return variants
    name = min(variants, key=lambda v: variants[v][MACHINES])
    return {name: variants[name]}


def as_built(cell: Cell) -> Cell:
    """A build without the TLS its overlay has runs plain the cells that leave TLS
    to it (the seed ran them over TLS), so the matrix still measures them; the
    variant's name says so."""
    overlay = cell.overlay
    if ("tls" in cell.overrides or Capability.TLS not in overlay.capabilities
            or not overlay.missing(Capability.TLS)):
        return cell
    return replace(cell, variant=f"{cell.variant}-plain",
                   overrides={**cell.overrides, "tls": False})


def available_overlays(base: Topology, names: list[str] | None = None) -> list[Overlay]:
    """The configured adapters that can run here (each asks the engine once)."""
    chosen = [overlay_for(base, n) for n in (names or OVERLAY_NAMES)]
    ready = []
    for overlay in chosen:
        reason = overlay.unavailable_reason()
        if reason:
            note(f"skipping overlay {overlay.name}: {reason}", style="yellow")
        else:
            ready.append(overlay)
    return ready


def matrix_directory(root: Path, resume: bool) -> Path:
    """results/<date>-<cores>cpu (-2, -3... when taken); --resume continues the newest
    matrix under root by its own record (run.json's start), whatever its date."""
    if resume and (last := newest_matrix(root)) is not None:
        return last
    return new_directory(root, f"{date.today().isoformat()}-{os.cpu_count()}cpu")


def newest_matrix(root: Path) -> Path | None:
    """The matrix directory under root that started last (a damaged run.json is passed
    over: it names no matrix)."""
    found = []
    for path in (p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []:
        try:
            record = read_record(path)
        except UserError:
            continue
        if record.kind == "matrix":
            found.append((record.started or "", path.name, path))
    return max(found)[2] if found else None


@contextmanager
def matrix_lock(directory: Path) -> Iterator[None]:
    """One matrix process per directory: a second one (a --resume while the first
    runs) is refused instead of mixing its rows into the first's."""
    with open(directory / LOCK_FILE, "a+") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise EnvironmentProblem(
                f"Another vnetbench matrix is writing {directory} now. Wait for it to end "
                "(or stop it), or give --out another directory.") from None
        yield


def finished_cells(directory: Path, passes: int, record: RunRecord) -> set[str]:
    """The cells a resumed matrix skips: those its record says completed (a cell cut
    short is run again whole, its rows dropped); from the rows, for a record without
    cells, those with every pass."""
    if record.cells:
        return {key for key, state in record.cells.items()
                if str(state).startswith("completed")}
    path = directory / PARQUET
    if not path.exists():
        return set()
    frame = load_results(directory)
    counts = frame.groupby(list(CELL))[PASS].nunique().reset_index()
    complete = counts[counts[PASS] >= passes]
    return {cell_key(r) for r in complete.to_dict("records")}


def without_unfinished(results: ResultSet, done: set[str]) -> ResultSet:
    """A resumed result set keeps only the rows of completed cells."""
    def cell_of(row: dict[str, Any]) -> str:
        if row.get(METHOD):
            return f"method/{row[METHOD]}/{row[OVERLAY]}"
        return cell_key(row)

    results.rows = [row for row in results.rows if cell_of(row) in done]
    return results


def cell_key(row: Mapping[Any, Any]) -> str:
    """The key of the matrix cell a results row belongs to (scenario/overlay/variant)."""
    return "/".join(str(row[column]) for column in CELL)


def cell_topology(base: Topology, cell: Cell, quick: bool) -> Topology:
    """The cell's settings over the topology's; with --quick, QUICK_SETTINGS is a
    ceiling: a lower value of the cell's (transactions' and the room's 3 s) or of the
    topology's own stands."""
    settings = {**base.settings.model_dump(), **cell.overrides}
    if quick:
        settings |= {key: min(value, settings.get(key, value))
                     for key, value in QUICK_SETTINGS.items()}
    return Topology.model_validate({**base.model_dump(), "overlay": cell.overlay.name,
                                    "settings": settings})


def parse_matrix_scenarios(text: str) -> list[str]:
    """--scenario's names (separated by commas), each one the matrix has cells of
    (CELLS), none twice; UserError naming the choices otherwise."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in CELLS]
    if not names or unknown:
        raise UserError(f"--scenario {text!r}: {', '.join(unknown) or 'no name'} is not a "
                        f"scenario of the matrix's. Give one or more of "
                        f"{', '.join(sorted(CELLS))}, separated by commas (others run by "
                        "name with vnetbench run).")
    if len(set(names)) != len(names):
        raise UserError(f"--scenario {text} names a scenario twice; list each once.")
    return names


def run_matrix(base: Topology, root: Path, quick: bool = False, resume: bool = False,
               overlay_names: list[str] | None = None,
               methods: list[Method] | None = None,
               scenario_names: list[str] | None = None) -> Path:
    """The cells (of `scenario_names` only, when given), then each reference method
    asked for (its own section of the report; the short form with --quick), every
    overlay that runs here."""
    base = without_workload(base)
    require_engine()
    runtime = local()  # this machine's: its images, its veth limit (calibration)
    runtime.project_images()
    overlays = available_overlays(base, overlay_names)
    scenarios = [s for s in SCENARIOS.values()
                 if scenario_names is None or s.name in scenario_names]
    cells = plan_cells(overlays, scenarios, quick)
    directory = matrix_directory(root, resume)
    with matrix_lock(directory):
        return run_cells(runtime, base, directory, cells, overlays, quick, resume, methods)


def without_workload(base: Topology) -> Topology:
    """The matrix's room is its quick variant (seconds: 3): a topology's workload would
    run whole in each of its passes (the contest: 8 minutes), so the matrix leaves it
    out and says so; `vnetbench run room` measures it."""
    if base.workload is None:
        return base
    note(f"the matrix's room runs its quick variant without the topology's workload "
         f"({base.workload.name}: {base.workload.seconds:g} s a pass); measure it with "
         "`vnetbench run room`", style="yellow")
    return base.model_copy(update={"workload": None})


def run_cells(runtime: HostRuntime, base: Topology, directory: Path, cells: list[Cell],
              overlays: list[Overlay], quick: bool, resume: bool,
              methods: list[Method] | None) -> Path:
    """The matrix's cells into its directory (its lock held), cells of one shape on
    one stack (runs/cells.py)."""
    passes = cell_topology(base, cells[0], quick).settings.passes if cells else 0
    previous = read_record(directory) if resume else RunRecord()
    done = finished_cells(directory, passes, previous) if resume else set()
    header = new_record("matrix", overlays, quick=quick, cells=previous.cells)
    header.started = previous.started or header.started
    results = (without_unfinished(ResultSet.resume(directory), done) if resume
               else ResultSet(directory))
    todo = [c for c in cells if c.key not in done]
    groups = group_cells(todo, lambda cell: cell_topology(base, cell, quick))
    note(f"matrix: {len(todo)} cell(s) to run, {len(cells) - len(todo)} already done; "
         f"{len(groups)} group(s), cells of one shape on one stack; results in {directory}")
    header.calibration = previous.calibration
    header.cell_timings = previous.cell_timings
    header.shared_stacks = previous.shared_stacks
    steps = len(todo) * passes + sum(
        method.passes(base, quick) for method in methods or [] for overlay in overlays
        if not method_cell_done(header, method, overlay))
    with recorded(directory, header), job_progress("matrix", steps=steps):
        if not header.calibration and todo:
            header.calibration = machine_limit(runtime, cell_topology(base, cells[0], quick),
                                               directory)
            header.save(directory)
        for group in groups:
            run_group(group, directory / "runs", results, header, directory)
        for method in methods or []:
            run_method_cells(base, method, overlays, directory, header, results, quick)
        if todo and "raw_veth_mbit" in header.calibration:
            header.calibration = bracketed(header.calibration, machine_limit(
                runtime, cell_topology(base, cells[0], quick), directory))
    return directory


def run_method_cells(base: Topology, method: Method, overlays: list[Overlay],
                     directory: Path, header: RunRecord, results: ResultSet,
                     quick: bool) -> None:
    """One cell per overlay: method/<name>/<overlay> (--resume skips completed ones)."""
    for overlay in overlays:
        key = method_cell(method, overlay)
        if method_cell_done(header, method, overlay):
            continue
        header.cells[key] = "running"
        header.save(directory)
        try:
            run_dir = run_method_into(base, method, {overlay.name: overlay}, results,
                                      directory / "runs", quick)[overlay.name]
        except BaseException as error:
            header.cells[key] = f"stopped: {error or type(error).__name__}"
            raise
        header.cells[key] = f"completed ({run_dir.name})"
        header.cell_timings[key] = summed_timings(read_record(run_dir).timings)


def method_cell(method: Method, overlay: Overlay) -> str:
    return f"method/{method.name}/{overlay.name}"


def method_cell_done(header: RunRecord, method: Method, overlay: Overlay) -> bool:
    return header.cells.get(method_cell(method, overlay), "").startswith("completed")


def machine_limit(runtime: HostRuntime, topology: Topology, directory: Path) -> dict[str, Any]:
    """The matrix's first cell: this machine's limit, a bare veth pair, with the
    streams' length and number of the cells that follow. A machine where it cannot
    be measured still runs the matrix; the report says it was not measured."""
    seconds, passes = topology.settings.seconds, topology.settings.passes
    try:
        rates = bare_rates(runtime, directory.name, seconds, passes, routers=0)
    except UserError as error:
        note(f"{error} The matrix goes on without it.", style="yellow")
        return {"error": str(error)}
    return {"raw_veth_mbit": statistics.median(rates), "raw_veth_passes": rates,
            "seconds": seconds}


def bracketed(first: dict[str, Any], last: dict[str, Any]) -> dict[str, Any]:
    """The machine's limit measured before the first cell and after the last: both
    kept (`brackets`), and the limit the one with the higher median (a busy moment
    lowers it, nothing raises it), with how far it moved between them."""
    brackets = [*first.get("brackets", [dict(first, at="before the first cell")]),
                {"at": "after the last cell", **last}]
    measured = [b for b in brackets if "raw_veth_mbit" in b]
    best = max(measured, key=lambda b: float(b["raw_veth_mbit"]))
    medians = [float(b["raw_veth_mbit"]) for b in measured]
    moved = 100 * (max(medians) - min(medians)) / max(medians)
    return {"raw_veth_mbit": best["raw_veth_mbit"], "raw_veth_passes": best["raw_veth_passes"],
            "seconds": first.get("seconds"), "brackets": brackets, "moved_percent": moved}
