"""`vnetbench clean`: remove the runs whose vnetbench process is gone (--all: every run;
--run: the runs named), their scratch directories, and the private keys an earlier
crash left in run directories: only in those vnetbench marked as it made them
(rundir.py), never a file found by its name or content elsewhere."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from vnetbench.commands.common import guarded
from vnetbench.errors import UserError
from vnetbench.terminal.ui import out_console


@guarded
def clean(
    every: Annotated[bool, typer.Option("--all", help="Also runs in progress and topologies "
                                                      "left up on purpose (vnetbench up).")]
    = False,
    runs: Annotated[list[str] | None, typer.Option(
        "--run", help="Remove this run whatever its owner (repeatable): a run whose owner "
                      "clean cannot look up (another PID namespace or host).")] = None,
    results: Annotated[str | None, typer.Option(
        "--results", metavar="DIR",
        help="The results directory whose run directories are scrubbed of the private "
             "keys an earlier crash left: only directories vnetbench marked as it made "
             "them (a .vnetbench-run file); a key anywhere else under it is left, and "
             "listed. Default: ./results where there is one.")] = None,
) -> None:
    """Remove the runs whose vnetbench process is gone (--all: every run; --run: the
    runs named), nothing else; wipe their keys' scratch directories and the keys an
    earlier crash left in run directories under --results that vnetbench made (proven
    by the marker it wrote in each): it removes nothing else, and names every other key
    file it finds there."""
    from vnetbench.engines import (
        Removed,
        every_engine,
        orphaned_runs,
        require_engine,
        run_owners,
    )
    from vnetbench.runtime.labels import unprovable

    scrubbed = check_clean_inputs(runs or [], results)
    require_engine()
    named = set(runs or [])
    removed = Removed()
    owners: dict[str, set[str | None]] = {}
    chosen: list[str] = []
    for engine in every_engine():  # this machine's, then a known swarm's nodes
        here = run_owners(engine)
        owners |= here
        picked = sorted(here) if every else sorted(set(orphaned_runs(engine)) |
                                                   (named & set(here)))
        chosen += picked
        for run_id in picked:
            removed.add(engine.remove_run(run_id))
        if every:  # also the rules of runs whose objects are gone already
            removed.add(engine.remove_run(None))
    rules, unknown = removed.rules, sorted(set(removed.unknown))
    chosen = sorted(set(chosen))
    kept = sorted(set(owners) - set(chosen))
    elsewhere = [run for run in kept if unprovable(owners[run])]
    out_console.print(f"removed {removed} and {rules} leftover iptables rule(s) of "
                      f"{len(chosen)} run(s)" + kept_runs(kept, elsewhere))
    for line in scratch_and_results(set(owners) - set(chosen), named | set(chosen), every,
                                    scrubbed):
        out_console.print(line)
    if unknown:
        raise UserError(" ".join(unknown))


def check_clean_inputs(runs: list[str], results: str | None) -> Path:
    """Before the engine is asked: every --run an id a run can have (render's RUN_ID, as
    `up` and every run print it), and a --results given that is a directory; the
    results directory to scrub (./results, which may not exist yet, by default)."""
    from vnetbench.commands.render import RUN_ID

    for run_id in runs:
        if not RUN_ID.fullmatch(run_id):
            shown = repr(run_id[:80]) + ("..." if len(run_id) > 80 else "")
            raise UserError(f"clean --run {shown}: no run has such an id (an id is what "
                            "`vnetbench up` or a run printed: lower-case letters, digits "
                            "and '-'). Give the id of a run, or leave --run out to remove "
                            "every run whose owner is gone.")
    if results is None:
        return Path("results")
    given = Path(results)  # an empty text is no directory, not this one ('.')
    if not results or not given.is_dir():
        state = ("is empty" if not results else "is not a directory" if given.exists()
                 else "does not exist")
        raise UserError(f"clean --results {results!r}: it {state}. Give the results "
                        "directory your runs wrote into (--out), or leave --results out.")
    return given


def kept_runs(kept: list[str], elsewhere: list[str]) -> str:
    """What `clean` kept and why, with the way to remove each kind."""
    if not kept:
        return ""
    said = (f"; kept {len(kept)} run(s) whose owner is alive or that were left up on "
            f"purpose: {', '.join(kept)} (--all removes them)")
    if elsewhere:
        said += (f". {len(elsewhere)} of them ({', '.join(elsewhere)}) belong to a vnetbench "
                 "process clean cannot look up (in another PID namespace, such as a "
                 "container, or on another host), so they are taken as alive; if that "
                 "process is gone, remove one with 'vnetbench clean --run RUN_ID'")
    return said


def scratch_and_results(present: set[str], removed: set[str], every: bool,
                        results: Path) -> list[str]:
    """Scratch directories of runs removed now, or with no objects left whose owner is
    gone, wiped; then the keys left in results scrubbed: what was done, one line each."""
    from vnetbench.runtime.labels import owner_gone
    from vnetbench.runtime.scratch import scratch_root, scratch_runs, wipe_run_scratch

    lines = []
    wiped = [run for run in scratch_runs() if run.run_id in removed or (
        run.run_id not in present and (every or owner_gone(run.owner)))]
    for run in wiped:
        wipe_run_scratch(run)
    if wiped:
        lines.append(f"wiped the scratch directories (where keys are made) of {len(wiped)} "
                     f"run(s) in {scratch_root()}: {', '.join(run.run_id for run in wiped)}")
    lines += scrub_results(results).said(results)
    return lines


@dataclass(frozen=True)
class Scrubbed:
    """What scrubbing a results directory did: the private key files removed (or,
    WireGuard's configs, redacted) inside run directories vnetbench marked as it made
    them; those left elsewhere, and the run directories left because their run is in
    progress."""

    removed: list[Path]
    left: list[Path]
    running: list[Path]

    def said(self, results: Path) -> list[str]:
        lines = []
        if self.removed:
            lines.append(f"removed {len(self.removed)} private key file(s) an earlier run "
                         f"left in its run directories under {results}: "
                         f"{', '.join(map(str, self.removed))}")
        if self.left:
            lines.append(f"left {len(self.left)} file(s) holding a private key under "
                         f"{results} that lie in no run directory vnetbench marked as it "
                         "made it (a run directory of a vnetbench before the marker, or "
                         "not vnetbench's), so clean does not touch them: "
                         f"{', '.join(map(str, self.left))}; remove them by hand if they "
                         "are a run's leftovers")
        if self.running:
            lines.append(f"left {len(self.running)} run directory(ies) under {results} "
                         "whose vnetbench process still runs (or runs elsewhere): "
                         f"{', '.join(map(str, self.running))}")
        return lines


def scrub_results(results: Path) -> Scrubbed:
    """The private keys a run left in its run directories under results removed
    (WireGuard's configs: their key redacted): only in directories vnetbench marked as
    it made them (rundir.py's marker, proof they are its own), whose run is not in
    progress; every other file holding a key is left, and listed. A stack directory
    that links to a scratch directory is a run's of this version: its keys are not
    here, and not touched."""
    from vnetbench.runtime.labels import Liveness, owner_liveness
    from vnetbench.runtime.rundir import marked_run_directories, run_marker
    from vnetbench.runtime.scratch import private_keys_under

    removed: list[Path] = []
    running: list[Path] = []
    for run_dir in marked_run_directories(results) if results.is_dir() else []:
        marker = run_marker(run_dir)
        owner = marker.owner if marker else None
        if owner_liveness(owner) in (Liveness.ALIVE, Liveness.UNPROVABLE):
            running.append(run_dir)
            continue
        removed += scrub_run_directory(run_dir)
    left = [path for path in private_keys_under(results)
            if not any(path.is_relative_to(run_dir) for run_dir in running)]
    return Scrubbed(sorted(set(removed)), left, running)


def scrub_run_directory(run_dir: Path) -> list[Path]:
    """One marked run directory's key files removed, WireGuard's configs redacted."""
    from vnetbench.overlays import OVERLAY_TYPES
    from vnetbench.overlays.base import remove_private_files
    from vnetbench.runtime.scratch import private_keys_under, scratch_links

    handled: list[Path] = []
    overlays = [overlay_type() for overlay_type in OVERLAY_TYPES.values()
                if overlay_type.secret_dirs]
    for stack_dir in stack_directories(run_dir):
        if not scratch_links(stack_dir):
            for overlay in overlays:
                handled += remove_private_files(overlay, stack_dir)
    for path in private_keys_under(run_dir):
        path.unlink(missing_ok=True)
        handled.append(path)
    return handled


def stack_directories(results: Path) -> list[Path]:
    """Every rendered stack directory (one with a compose.yml) under results, links not
    followed."""
    from vnetbench.deploy.render import COMPOSE_FILE

    return sorted(Path(directory) for directory, _, files in os.walk(results)
                  if COMPOSE_FILE in files)
