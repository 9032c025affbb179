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
    from vnetbench.engine import require_engine
    from vnetbench.fabric import FabricUnknown, remove_fabric_rules
    from vnetbench.stack import Removed, orphaned_runs, run_owners
    from vnetbench.swarm import each_engine, sweep_run

    require_engine()
    removed, rules = Removed(), 0
    unknown: list[str] = []
    owners: dict[str, set[str | None]] = {}
    chosen: list[str] = []
    for swarm in each_engine():  # this machine's, then a known swarm's nodes
        here = run_owners()
        owners |= here
        picked = sorted(here) if every else orphaned_runs()
        chosen += picked
        for run_id in picked:
            removed.add(sweep_run(run_id, swarm))
        try:  # on each engine in use: this machine's, or the swarm's nodes
            rules += sum(remove_fabric_rules(run_id) for run_id in picked)
            rules += remove_fabric_rules(None) if every else 0
        except FabricUnknown as error:
            unknown.append(str(error))
    chosen = sorted(set(chosen))
    kept = sorted(set(owners) - set(chosen))
    out_console.print(f"removed {removed} and {rules} leftover iptables rule(s) of "
                      f"{len(chosen)} run(s)" + (f"; kept {len(kept)} run(s) whose owner is "
                                                 f"alive or that were left up on purpose: "
                                                 f"{', '.join(kept)} (--all removes them)"
                                                 if kept else ""))
    if unknown:
        raise UserError(" ".join(unknown))

