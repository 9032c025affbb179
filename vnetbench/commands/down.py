"""`vnetbench down`: tear down one run, every container, network and volume with its label."""

from __future__ import annotations

from contextlib import suppress
from pathlib import Path
from typing import Annotated

import typer

from vnetbench.commands.common import guarded, out_directory
from vnetbench.errors import UserError
from vnetbench.terminal.ui import note, out_console


@guarded
def down(
    run_id: Annotated[str, typer.Argument(help="Run id printed by `up`.")],
    out: Annotated[Path | None, typer.Option(help="Where `up` put the run directory.")] = None,
) -> None:
    """Tear down one run: every container, network and volume with its label."""
    from vnetbench.analysis.runrecord import RunRecord, read_record
    from vnetbench.engines import Removed, every_engine, require_engine, run_ids_present

    check_down_inputs(run_id, out)
    require_engine()
    present: list[str] = []
    removed = Removed()
    record = RunRecord()
    with suppress(UserError):
        record = read_record(out_directory(out, check=False) / run_id)
    for engine in every_engine(record.as_json()):  # here, then the run's swarm
        here = run_ids_present(engine)
        present += here
        if run_id in here:
            removed.add(engine.remove_run(run_id))
    if run_id not in present:
        raise UserError(f"There is no run '{run_id}' on this engine or a known swarm (runs "
                        f"present: {', '.join(sorted(set(present))) or 'none'}).")
    forget_up_keys(run_id, out)
    out_console.print(f"removed {removed} and {removed.rules} leftover iptables rule(s)")


def check_down_inputs(run_id: str, out: Path | None) -> None:
    """Before the engine is asked: an id no run can have (render's RUN_ID: what new_run_id
    makes and --run-id takes), and an --out that is not a directory."""
    from vnetbench.commands.render import RUN_ID

    if not RUN_ID.fullmatch(run_id):
        shown = repr(run_id[:80]) + ("..." if len(run_id) > 80 else "")
        raise UserError(f"{shown}: down needs the id of a run, as `vnetbench up` printed it "
                        "(lower-case letters, digits and '-'; `vnetbench clean` lists the "
                        "runs present).")
    if out is not None and not out.is_dir():
        raise UserError(f"--out {out}: there is no directory {out}. Give down the --out "
                        "that `up` was given, or leave it out (the run's containers are "
                        "found by their labels).")


def forget_up_keys(run_id: str, out: Path | None) -> None:
    """The private keys of a topology `up` left running, once it is down."""
    from vnetbench.analysis.runrecord import RUN_FILE, read_record
    from vnetbench.deploy.lifecycle import forget_private_keys
    from vnetbench.overlays import overlay_for

    run_dir = out_directory(out, check=False) / run_id
    if not (run_dir / RUN_FILE).exists():
        note(f"There is no run directory {run_dir}, so the private keys `up` wrote "
             "for this run were not removed: give `down` the --out that `up` was given "
             "(or remove that run directory's key files yourself).", style="yellow")
        return
    with suppress(UserError):
        topology = read_record(run_dir).recorded_topology(run_dir)
        if topology is not None:
            forget_private_keys(overlay_for(topology), run_dir)
