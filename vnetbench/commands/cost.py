"""`vnetbench cost`: what each machine of a room costs, per overlay and role, from
results directories of room passes at several sizes."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from vnetbench.commands.common import guarded
from vnetbench.errors import UserError
from vnetbench.runtime.rundir import writable_directory
from vnetbench.terminal.ui import note, out_console

if TYPE_CHECKING:
    import pandas as pd


@guarded
def cost(
    directories: Annotated[list[Path], typer.Argument(
        help="Results directories with room passes (run room at several --machines, or "
             "a capacity search), or a root holding several.")],
    out: Annotated[Path | None, typer.Option(
        help="The directory cost.md and cost.png are written into (made if missing; "
             "default ./cost); refused when it is, or lies inside, a directory read.")]
    = None,
    check_at: Annotated[int | None, typer.Option(
        min=1, help="Check the fit: make it from the room sizes below N only, predict "
                    "each role's CPU and memory per container at N with a 95 % prediction "
                    "interval, and say in cost.md whether the passes measured at N lie "
                    "inside (exit 1 when one does not). N must have been measured.")]
    = None,
) -> None:
    """What each machine costs, per overlay and role: CPU per request answered and
    memory per container against the room's size, each a straight-line fit where the
    points lie on a line."""
    import pandas as pd

    from vnetbench.analysis.results import find_results, load_results
    from vnetbench.report.cost import write_cost
    from vnetbench.terminal.outputs import Output, check_outputs, results_inputs

    default, out = out is None, out or Path("cost")
    check_outputs("cost", [Output("--out", path, directory=path == out, default=default)
                           for path in (out, out / "cost.md", out / "cost.png")],
                  results_inputs(directories))
    frames = [load_results(directory) for directory in find_results(directories)]
    frame = pd.concat(frames, ignore_index=True)
    if check_at is not None:
        check_measured(frame, check_at, directories)
    written = write_cost(frame, lambda: writable_directory(out, "--out"), check_at)
    if written is None:
        raise UserError(f"{', '.join(map(str, directories))}: no room pass with CPU and "
                        "memory per role in these results; give directories of "
                        "`vnetbench run room` (at several --machines) or of "
                        "`vnetbench capacity`.")
    out_console.print(written.table, soft_wrap=True)
    note(f"cost: {out / 'cost.md'} ({out / 'cost.png'})")
    if check_at is not None:
        from vnetbench.report.cost_check import check_section, missed

        out_console.print("\n" + check_section(written.checked, check_at), soft_wrap=True)
        if missed(written.checked):
            note(f"cost: a figure measured at {check_at} machines lies outside the fit's "
                 "95 % prediction interval", style="yellow")
            raise typer.Exit(1)


def check_measured(frame: pd.DataFrame, at: int, directories: list[Path]) -> None:
    """--check-at names a size with room passes in the directories read (refused before
    anything is written)."""
    from vnetbench.report.cost import cost_points

    sizes = sorted(set(cost_points(frame)["machines"].tolist()))
    if at not in sizes:
        found = ", ".join(map(str, sizes)) or "none"
        raise UserError(f"--check-at {at}: {', '.join(map(str, directories))} hold no room "
                        f"pass of {at} machines with CPU and memory per role (room sizes "
                        f"found: {found}); give one of those sizes, or add the results of "
                        f"`vnetbench run room --machines {at}`.")
