"""`vnetbench history`: one page of the headline metrics across results directories."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from vnetbench.commands.common import guarded
from vnetbench.report.options import LabelFrom, Order
from vnetbench.terminal.machine_output import JsonFile, JsonToStdout, emit_json
from vnetbench.terminal.ui import out_console


@guarded
def history(
    directories: Annotated[list[Path], typer.Argument(
        help="Results directories, or a root holding several (e.g. results/).")],
    out: Annotated[Path | None, typer.Option(
        help="The directory history.html is written into (made if missing; default "
             "./history); refused when it is, or lies inside, a directory read.")] = None,
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
    from vnetbench.report.history import HISTORY, build_history
    from vnetbench.terminal.outputs import Output, check_outputs, results_inputs

    where = out or Path("history")
    check_outputs("history", [Output("--out", where, directory=True, default=out is None),
                              Output("--out", where / HISTORY, default=out is None),
                              *([Output("--json-file", json_file, must_exist=True)]
                                if json_file else [])],
                  results_inputs(directories) + results_inputs([noise] if noise else [],
                                                               "--noise"))
    written = build_history(directories, where, noise, label_from, label or [], order)
    emit_json(written.json, as_json, json_file)
    if not as_json:
        out_console.print(f"history: {written.path}", soft_wrap=True)
