"""`vnetbench history`: one page of the headline metrics across results directories."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from vnetbench.commands.common import guarded
from vnetbench.report.options import LabelFrom, Order
from vnetbench.ui import out_console


@guarded
def history(
    directories: Annotated[list[Path], typer.Argument(
        help="Results directories, or a root holding several (e.g. results/).")],
    out: Annotated[Path, typer.Option(help="Where history.html goes.")] = Path("history"),
    noise: Annotated[Path | None, typer.Option(
        help="An A/A directory (vnetbench ab with no --b): changes beyond its noise floor "
             "are marked. Default: a noise.json in any of the directories.")] = None,
    label_from: Annotated[LabelFrom, typer.Option(
        help="Each directory's label: date (run.json started), vnet (the vNet image) or "
             "tools (the tools image).")] = LabelFrom.DATE,
    label: Annotated[list[str] | None, typer.Option(
        help="DIR=TEXT: this directory's label (repeatable); over --label-from.")] = None,
    order: Annotated[Order, typer.Option(help="date, or label (natural order).")]
    = Order.DATE,
) -> None:
    """One page of the headline metrics across results directories (builds): a graph
    per metric, the changes beyond this machine's noise floor marked and listed."""
    from vnetbench.report.history import build_history

    path = build_history(directories, out, noise, label_from, label or [], order)
    out_console.print(f"history: {path}", soft_wrap=True)
