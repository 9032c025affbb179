"""`vnetbench capacity`: the largest room, or rate per machine, that meets a target."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from vnetbench.commands.common import (
    DEFAULT_TOPOLOGY,
    OUT_HELP,
    file_inputs,
    guarded,
    out_directory,
    read_topology,
    with_workload,
)
from vnetbench.commands.options import TopologyOption
from vnetbench.errors import UserError
from vnetbench.terminal.exitstatus import ExitStatus
from vnetbench.terminal.machine_output import (
    JsonFile,
    JsonToStdout,
    JsonWanted,
    people_on_stderr,
)
from vnetbench.terminal.ui import note

if TYPE_CHECKING:
    from vnetbench.runs.capacity import Search

Dimension = Literal["machines", "rate"]


def check_search_options(by: str, overlay: str | None, machines: int | None,
                         rate: float | None, precision: float) -> None:
    """What the search grows is not also given, and its stopping share is a share."""
    searched = {"machines": ("--machines", machines), "rate": ("--rate", rate)}[by]
    if searched[1] is not None:
        raise UserError(f"{searched[0]} {searched[1]:g} with --by {by}: the search sets the "
                        f"room's {by} itself, step by step. Leave {searched[0]} out, and give "
                        "the first and largest size with --start and --max.")
    if overlay is not None and not overlay.strip():
        raise UserError("--overlay '': no overlay named. Give one overlay, e.g. --overlay "
                        "wireguard, or leave the option out (the topology's overlay).")
    if not 0.01 <= precision <= 1:  # nan included: no comparison holds for it
        raise UserError(f"--precision {precision:g}: the search stops when the largest size "
                        "that met and the smallest that missed are this share apart, from "
                        "0.01 to 1. Give e.g. --precision 0.1.")


@guarded
def capacity(
    slo: Annotated[str, typer.Option(help="The target, e.g. p99=50ms,failed=0 (keys: p50, "
                                     "p95, p99, max, failed, fairness; under a workload "
                                     "per phase, p99@steady=50ms (p50, p99, max, failed), "
                                     "and per at-once event, last@statement=10s "
                                     "(last, unfinished)).")],
    topology_file: TopologyOption = DEFAULT_TOPOLOGY,
    overlay: Annotated[str | None, typer.Option(help="The overlay (one).")] = None,
    by: Annotated[Dimension, typer.Option(help="What grows: the room's machines, or the "
                                          "requests per second of each machine.")]
    = "machines",
    start: Annotated[float | None, typer.Option(help="The first size (machines: 10, rate: "
                                                "5/s).")] = None,
    most: Annotated[float | None, typer.Option("--max", help="The largest size tried "
                                               "(machines: 400, rate: 1000/s).")] = None,
    precision: Annotated[float, typer.Option(help="Stop when the largest size that met "
                                             "and the smallest that missed are this share "
                                             "apart (0.01 to 1).")] = 0.1,
    seconds: Annotated[float, typer.Option(help="Load per pass (seconds).")] = 5.0,
    passes: Annotated[int, typer.Option(help="Passes per step, on one stack; judged on "
                                        "their median (counts: the worst pass).",
                                        min=1, max=20)] = 3,
    machines: Annotated[int | None, typer.Option(help="The room's machines (--by rate).")]
    = None,
    rate: Annotated[float | None, typer.Option(help="Requests per second of each machine "
                                               "(--by machines).")] = None,
    out: Annotated[Path | None, typer.Option(help=OUT_HELP)] = None,
    workload: Annotated[str | None, typer.Option(
        help="The room's load as phases, a workload file or a shipped profile's name "
             "(contest), in place of the topology's workload and room_rate (and "
             "--seconds: a pass lasts the workload).")] = None,
    as_json: JsonToStdout = False,
    json_file: JsonFile = None,
) -> None:
    """Find the largest room (or rate per machine) that meets a target, step by step.
    Exit 1 when no size met it. --json/--json-file: the search, its every step, the
    largest size that met the target and the limit (each pass's line then goes to
    stderr)."""
    from vnetbench.commands.documents import capacity_document
    from vnetbench.runs.capacity import (
        CapacityPlan,
        check_sizes,
        parse_slo,
        run_capacity,
        slo_problems,
    )
    from vnetbench.runs.comparison import parse_overlays, require_overlays

    check_search_options(by, overlay, machines, rate, precision)
    overrides = {k: v for k, v in {"seconds": seconds, "machines": machines,
                                   "room_rate": rate}.items() if v is not None}
    topology = with_workload(read_topology(topology_file, overrides), workload)
    clauses = parse_slo(slo)
    problems = slo_problems(clauses, topology, by)
    if problems:
        raise UserError("\n".join([f"capacity --slo {slo}: the search cannot start "
                                   f"({len(problems)} problem(s)):",
                                   *(f"  - {p}" for p in problems),
                                   "Fix these and run again."]))
    names = parse_overlays(overlay, topology.overlay)
    if len(names) != 1:
        raise UserError(f"--overlay {overlay}: capacity searches one overlay at a time; "
                        "run it once per overlay.")
    topology = topology.model_copy(update={"overlay": names[0]})
    first = start if start is not None else (10 if by == "machines" else 5)
    last = most if most is not None else (400 if by == "machines" else 1000)
    check_sizes(topology, by, first, last)
    inputs = file_inputs(topology=topology_file, workload=workload)
    wanted = JsonWanted("capacity", as_json, json_file)
    wanted.check(inputs)
    results = out_directory(out, command="capacity", inputs=inputs)
    adapter = require_overlays(topology, names)[names[0]]
    plan = CapacityPlan(topology, adapter, clauses, by, first, last, precision, passes)
    with people_on_stderr(as_json):
        directory, search = run_capacity(plan, results)
    status = ExitStatus.MISSED if search.best() is None else ExitStatus.OK
    say_found(search, slo, by, first, directory)
    wanted.emit(capacity_document(plan, search, directory, status))
    if status:
        raise typer.Exit(status)


def say_found(search: Search, slo: str, by: str, first: float, directory: Path) -> None:
    """The search's answer and where its files are, on stderr."""
    best, miss = search.best(), search.first_miss()
    unit = " machines" if by == "machines" else " requests/s per machine"
    if best is None:
        note(f"no size met {slo}: the first, {first:g}{unit}, missed", style="yellow")
    else:
        note(f"largest that met {slo}: {best:g}{unit}"
             + (f"; {miss.size:g} missed" if miss else " (the largest tried, --max)"))
    if miss and miss.limit:
        note(f"the limit at {miss.size:g}: {miss.limit}")
    note(f"plot: {directory / 'capacity.png'}")
    if (directory / "cost.md").is_file():
        note(f"what each machine costs: {directory / 'cost.md'} ({directory / 'cost.png'})")
    note(f"results: {directory}")
