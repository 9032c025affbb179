"""`vnetbench shape`: change the link profiles of a topology `up` left running."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from vnetbench.commands.common import guarded, out_directory
from vnetbench.commands.render import RUN_ID
from vnetbench.errors import UserError
from vnetbench.terminal.ui import out_console

if TYPE_CHECKING:
    from vnetbench.model.topology import Topology


@guarded
def shape(
    run_id: Annotated[str, typer.Argument(help="Run id printed by `up`.")],
    setting: Annotated[list[str] | None, typer.Option(
        "--set", help="SEGMENT.KEY=VALUE, e.g. backbone.delay=20ms (repeatable); "
                      "none: apply the run's profiles again")] = None,
    out: Annotated[Path | None, typer.Option(help="Where `up` put the run directory.")] = None,
) -> None:
    """Change the link profiles of a running topology (from `vnetbench up`)."""
    from vnetbench.analysis.runrecord import RunRecord, read_record
    from vnetbench.engines import recorded_engine, require_engine
    from vnetbench.engines.base import RunRef
    from vnetbench.shaping.apply import check_shaping, shape_run

    if not RUN_ID.fullmatch(run_id):  # '../x' read another directory's run.json
        raise UserError(f"{run_id!r} is not a run id: a run id is lower-case letters, "
                        "digits and '-' (64 at most, a letter or digit first), as `vnetbench "
                        "up` printed it. Give that id, and --out if `up` used one.")
    run_dir = out_directory(out, check=False) / run_id
    record = read_record(run_dir) if run_id.strip() else RunRecord()
    topology = record.recorded_topology(run_dir)
    if topology is None:
        raise UserError(f"There is no run.json of a running topology for run '{run_id}' under "
                        f"{run_dir.parent}. Give the id `vnetbench up` printed, and --out if "
                        "it used one.")
    topology = with_settings(topology, setting or [])
    check_shaping(topology)
    require_engine()
    applied = shape_run(RunRef(recorded_engine(record.as_json()), run_id), topology)
    record.record_shaping(run_dir, topology, applied)
    out_console.print(f"{run_id}: shaping applied to {len(applied) - 1 if applied else 0} "
                      f"container(s); run.json holds what the kernel reports")


def with_settings(topology: Topology, settings: list[str]) -> Topology:
    """The topology with each --set SEGMENT.KEY=VALUE applied."""
    from vnetbench.shaping.assign import parse_assignment, with_link_setting

    for item in settings:
        assignment = parse_assignment(item)
        if len(assignment.values) != 1:
            raise UserError(f"--set {item}: give one value here (lists are for sweep).")
        topology = with_link_setting(topology, assignment, assignment.values[0])
    return topology

