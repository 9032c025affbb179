"""`vnetbench cost`: what each machine of a room costs, per overlay and role, from
results directories of room passes at several sizes."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import pandas as pd
import typer

from vnetbench.commands.common import guarded
from vnetbench.errors import UserError
from vnetbench.runtime.rundir import writable_directory
from vnetbench.terminal.ui import note, out_console


@guarded
def cost(
    directories: Annotated[list[Path], typer.Argument(
        help="Results directories with room passes (run room at several --machines, or "
             "a capacity search), or a root holding several.")],
    out: Annotated[Path | None, typer.Option(
        help="The directory cost.md and cost.png are written into (made if missing; "
             "default ./cost); refused when it is, or lies inside, a directory read.")]
    = None,
) -> None:
    """What each machine costs, per overlay and role: CPU per request answered and
    memory per container against the room's size, each a straight-line fit where the
    points lie on a line."""
    from vnetbench.analysis.results import find_results, load_results
    from vnetbench.report.cost import write_cost
    from vnetbench.terminal.outputs import Output, check_outputs, results_inputs

    default, out = out is None, out or Path("cost")
    check_outputs("cost", [Output("--out", path, directory=path == out, default=default)
                           for path in (out, out / "cost.md", out / "cost.png")],
                  results_inputs(directories))
    frames = [load_results(directory) for directory in find_results(directories)]
    table = write_cost(pd.concat(frames, ignore_index=True),
                       lambda: writable_directory(out, "--out"))
    if table is None:
        raise UserError(f"{', '.join(map(str, directories))}: no room pass with CPU and "
                        "memory per role in these results; give directories of "
                        "`vnetbench run room` (at several --machines) or of "
                        "`vnetbench capacity`.")
    out_console.print(table, soft_wrap=True)
    note(f"cost: {out / 'cost.md'} ({out / 'cost.png'})")
