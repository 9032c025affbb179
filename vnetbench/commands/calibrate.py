"""`vnetbench calibrate`: this machine's limits and the testbed's own cost."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from vnetbench.commands.common import guarded, out_directory, rich_table
from vnetbench.errors import UserError
from vnetbench.terminal.machine_output import (
    JsonFile,
    JsonToStdout,
    JsonWanted,
    people_on_stderr,
)
from vnetbench.terminal.ui import err_console, error_line, out_console


@guarded
def calibrate(
    seconds: Annotated[float, typer.Option(min=1, max=60, help="Length of each TCP stream.")]
    = 5.0,
    passes: Annotated[int, typer.Option(
        min=1, max=20, help="Streams per figure.")] = 3,
    rounds: Annotated[int, typer.Option(
        min=2, max=50, help="Rounds of the two-router paths in turn (vnetbench's, the "
        "bare one with the engine's rules, the bare one: a stream of 3 s, or --seconds if "
        "less, and 100 pings each); under 6 the ratios' interval is their whole range "
        "instead of a 95 % one.")] = 8,
    idle_seconds: Annotated[float, typer.Option(
        min=1, max=600, help="Length of each idle sample (the host with nothing up, then "
        "with the 50-agent topology up): shorter is sooner done, and the idle cost "
        "coarser.")] = 10.0,
    scale: Annotated[bool, typer.Option(
        help="Also the testbed at scale: 200 containers up and down, the start gate, "
             "join passes on kept containers, rooms of vNet agents.")] = False,
    out: Annotated[Path, typer.Option(
        help="Where calibrate-<time>/ goes (a new directory of its own, never over a "
             "file; refused when it is a file).")] = Path("results"),
    as_json: JsonToStdout = False,
    json_file: JsonFile = None,
) -> None:
    """This machine's limits and the testbed's own cost, each against its target: raw
    veth pair, baseline path, delay line, idle cost (and with --scale, the testbed at
    scale). Exit 1 when a figure missed its target, 3 when one with a target could
    not be measured (the engine, vNet images absent). --json/--json-file: each figure
    against its target (the table then goes to stderr)."""
    import pandas as pd

    from vnetbench.commands.documents import calibration_document
    from vnetbench.engines import local
    from vnetbench.model.topology import whole_seconds
    from vnetbench.runs.calibration import calibrate as measure
    from vnetbench.runs.calibration import figure_rows
    from vnetbench.runs.targets import calibration_verdict

    try:
        whole_seconds(seconds)  # the raw veth figures run iperf3 -t with it directly
    except ValueError as error:
        raise UserError(f"--seconds: {error}.") from None
    wanted = JsonWanted("calibrate", as_json, json_file)
    wanted.check()
    root = out_directory(out, command="calibrate")  # refused before the engine is asked
    with people_on_stderr(as_json):
        directory, figures = measure(local(), root, seconds, passes, scale, rounds,
                                     idle_seconds)
        out_console.print(rich_table(pd.DataFrame(figure_rows(figures))))
        out_console.print(f"calibration: {directory / 'calibration.json'}")
    status, lines = calibration_verdict(figures)
    for line in lines:
        err_console.print(error_line(line), highlight=False, soft_wrap=True)
    wanted.emit(calibration_document(directory, figures, status))
    if status:
        raise typer.Exit(status)
