"""`vnetbench clean`: remove the runs whose vnetbench process is gone (--all: every run;
--run: the runs named), their scratch directories, and the private keys an earlier
crash left in results directories."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from vnetbench.commands.common import guarded
from vnetbench.errors import UserError
from vnetbench.ui import out_console


@guarded
def clean(
    every: Annotated[bool, typer.Option("--all", help="Also runs in progress and topologies "
                                                      "left up on purpose (vnetbench up).")]
    = False,
    runs: Annotated[list[str] | None, typer.Option(
        "--run", help="Remove this run whatever its owner (repeatable): a run whose owner "
                      "clean cannot look up (another PID namespace or host).")] = None,
    results: Annotated[Path, typer.Option(
        "--results", help="The results directory scrubbed of private keys an earlier "
                          "crash left.")] = Path("results"),
) -> None:
    """Remove the runs whose vnetbench process is gone (--all: every run; --run: the
    runs named), nothing else; wipe their keys' scratch directories and the keys an
    earlier crash left under --results."""
    from vnetbench.engines import (
        Removed,
        every_engine,
        orphaned_runs,
        require_engine,
        run_owners,
    )
    from vnetbench.labels import unprovable

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
                                    results):
        out_console.print(line)
    if unknown:
        raise UserError(" ".join(unknown))


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
    from vnetbench.labels import owner_gone
    from vnetbench.scratch import scratch_root, scratch_runs, wipe_run_scratch

    lines = []
    wiped = [run for run in scratch_runs() if run.run_id in removed or (
        run.run_id not in present and (every or owner_gone(run.owner)))]
    for run in wiped:
        wipe_run_scratch(run)
    if wiped:
        lines.append(f"wiped the scratch directories (where keys are made) of {len(wiped)} "
                     f"run(s) in {scratch_root()}: {', '.join(run.run_id for run in wiped)}")
    scrubbed = scrub_results(results)
    if scrubbed:
        lines.append(f"removed {len(scrubbed)} private key file(s) an earlier run left in "
                     f"{results}: {', '.join(str(path) for path in scrubbed)}")
    return lines


def scrub_results(results: Path) -> list[Path]:
    """The private keys found under a results directory removed (WireGuard's configs:
    their key redacted); the files handled. A stack directory that links to a scratch
    directory is a run's of this version: its keys are not here, and not touched."""
    from vnetbench.overlays import OVERLAY_TYPES
    from vnetbench.overlays.base import remove_private_files
    from vnetbench.scratch import private_keys_under, scratch_links

    handled: list[Path] = []
    overlays = [overlay_type() for overlay_type in OVERLAY_TYPES.values()
                if overlay_type.secret_dirs]
    for stack_dir in stack_directories(results):
        if not scratch_links(stack_dir):
            for overlay in overlays:
                handled += remove_private_files(overlay, stack_dir)
    for path in private_keys_under(results):
        path.unlink(missing_ok=True)
        handled.append(path)
    return sorted(set(handled))


def stack_directories(results: Path) -> list[Path]:
    """Every rendered stack directory (one with a compose.yml) under results, links not
    followed."""
    from vnetbench.render import COMPOSE_FILE

    return sorted(Path(directory) for directory, _, files in os.walk(results)
                  if COMPOSE_FILE in files)
