"""`vnetbench calibrate`: this machine's limits and the testbed's own cost."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from vnetbench.commands.common import guarded, out_directory, rich_table
from vnetbench.errors import UserError
from vnetbench.terminal.ui import out_console


@guarded
def calibrate(
    seconds: Annotated[float, typer.Option(min=1, max=60, help="Length of each TCP stream.")]
    = 5.0,
    passes: Annotated[int, typer.Option(
        min=1, max=20, help="Streams per figure; rounds of the two-router paths in turn.")] = 3,
    scale: Annotated[bool, typer.Option(
        help="Also the testbed at scale: 200 containers up and down, the start gate, "
             "join passes on kept containers, rooms of vNet agents.")] = False,
    out: Annotated[Path, typer.Option(
        help="Where calibrate-<time>/ goes (a new directory of its own, never over a "
             "file; refused when it is a file).")] = Path("results"),
) -> None:
    """This machine's limits and the testbed's own cost, each against its target: raw
    veth pair, baseline path, delay line, idle cost (and with --scale, the testbed at
    scale)."""
    import pandas as pd

    from vnetbench.engines import local
    from vnetbench.model.topology import whole_seconds
    from vnetbench.runs.calibration import calibrate as measure
    from vnetbench.runs.calibration import figure_rows

    try:
        whole_seconds(seconds)  # the raw veth figures run iperf3 -t with it directly
    except ValueError as error:
        raise UserError(f"--seconds: {error}.") from None
    root = out_directory(out, command="calibrate")  # refused before the engine is asked
    directory, figures = measure(local(), root, seconds, passes, scale)
    out_console.print(rich_table(pd.DataFrame(figure_rows(figures))))
    out_console.print(f"calibration: {directory / 'calibration.json'}")

