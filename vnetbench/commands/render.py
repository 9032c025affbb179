"""`vnetbench render`: a topology's compose.yml and files, nothing started."""

from __future__ import annotations

import re
from ipaddress import IPv4Network
from pathlib import Path
from typing import Annotated

import typer

from vnetbench.commands.common import DEFAULT_BLOCK, file_inputs, guarded, read_topology
from vnetbench.errors import UserError
from vnetbench.terminal.ui import out_console

RUN_ID = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")  # as new_run_id makes them: name-stamp-hex


def check_run_id(run_id: str | None) -> None:
    """A run id is written into compose.yml's names and labels: only what those hold."""
    if run_id is not None and not RUN_ID.fullmatch(run_id):
        raise UserError(f"--run-id {run_id!r}: a run id is lower-case letters, digits and "
                        "'-' (64 at most, a letter or digit first), as it names the run's "
                        "containers and labels. Give e.g. --run-id two-sites-test, or leave it "
                        "out (the topology's name).")


def parse_block(block: str) -> IPv4Network:
    from vnetbench.model.addressing import block_problem

    try:
        network = IPv4Network(block)
    except ValueError as error:
        raise UserError(f"--block {block!r} is not an IPv4 network ({error}). Give a "
                        f"private /16, e.g. --block {DEFAULT_BLOCK}.") from None
    problem = block_problem(network)
    if problem:
        raise UserError(f"--block {block}: {problem}. Give a private /16, e.g. --block "
                        f"{DEFAULT_BLOCK}.")
    return network


@guarded
def render(
    file: Annotated[Path, typer.Argument(help="Topology file.")],
    output: Annotated[Path, typer.Option(
        "--output", "-o", help="Directory to write compose.yml and the overlay's files "
                               "into (made if missing); refused when it is, or holds as "
                               "compose.yml, the topology file.")],
    run_id: Annotated[str | None, typer.Option(help="Run id (default: the topology's name).")]
    = None,
    block: Annotated[str, typer.Option(help="The run's /16 address block.")] = DEFAULT_BLOCK,
) -> None:
    """Render a topology into compose.yml (and its files) without starting anything."""
    from vnetbench.deploy.render import COMPOSE_FILE, render_run
    from vnetbench.overlays import overlay_for
    from vnetbench.runtime.rundir import writable_directory
    from vnetbench.terminal.outputs import Output, check_outputs

    topology = read_topology(file)
    check_run_id(run_id)
    network = parse_block(block)
    check_outputs("render", [Output("--output", output, directory=True),
                             Output("--output", output / COMPOSE_FILE)],
                  file_inputs(topology=file))
    writable_directory(output, "--output")
    overlay = overlay_for(topology)
    overlay.detect()  # what the images hold, asked once; rendering itself is pure
    topology = overlay.adjust(topology).topology
    rendered = render_run(topology, overlay, run_id or topology.name, network, output)
    out_console.print(str(rendered.compose_file), highlight=False, markup=False)
