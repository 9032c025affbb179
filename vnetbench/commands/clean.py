"""`vnetbench clean`: remove the runs whose vnetbench process is gone (--all: every run)."""

from __future__ import annotations

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
) -> None:
    """Remove the runs whose vnetbench process is gone (--all: every run), nothing else."""
    from vnetbench.engines import (
        Removed,
        every_engine,
        orphaned_runs,
        require_engine,
        run_owners,
    )

    require_engine()
    removed = Removed()
    owners: dict[str, set[str | None]] = {}
    chosen: list[str] = []
    for engine in every_engine():  # this machine's, then a known swarm's nodes
        here = run_owners(engine)
        owners |= here
        picked = sorted(here) if every else orphaned_runs(engine)
        chosen += picked
        for run_id in picked:
            removed.add(engine.remove_run(run_id))
        if every:  # also the rules of runs whose objects are gone already
            removed.add(engine.remove_run(None))
    rules, unknown = removed.rules, sorted(set(removed.unknown))
    chosen = sorted(set(chosen))
    kept = sorted(set(owners) - set(chosen))
    out_console.print(f"removed {removed} and {rules} leftover iptables rule(s) of "
                      f"{len(chosen)} run(s)" + (f"; kept {len(kept)} run(s) whose owner is "
                                                 f"alive or that were left up on purpose: "
                                                 f"{', '.join(kept)} (--all removes them)"
                                                 if kept else ""))
    if unknown:
        raise UserError(" ".join(unknown))

