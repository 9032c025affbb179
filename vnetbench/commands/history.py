"""`vnetbench history`: one page of the headline metrics across results directories."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from vnetbench.commands.common import guarded
from vnetbench.machine_output import JsonFile, JsonToStdout, check_json_file, emit_json
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
    as_json: JsonToStdout = False,
    json_file: JsonFile = None,
) -> None:
    """One page of the headline metrics across results directories (builds): a graph
    per metric, the changes beyond this machine's noise floor and the change points
    across each series marked and listed. --json/--json-file: the series and their
    change points (history.html is written too)."""
    from vnetbench.report.history import build_history

    check_json_file("history", json_file, [*directories, *([noise] if noise else [])])
    written = build_history(directories, out, noise, label_from, label or [], order)
    emit_json(written.json, as_json, json_file)
    if not as_json:
        out_console.print(f"history: {written.path}", soft_wrap=True)
