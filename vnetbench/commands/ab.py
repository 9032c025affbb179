"""`vnetbench ab`: two variants measured in one session, judged over their pairs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from vnetbench.commands.common import (
    DEFAULT_TOPOLOGY,
    OUT_HELP,
    file_inputs,
    guarded,
    out_directory,
    parse_fraction,
    read_topology,
)
from vnetbench.commands.options import TopologyOption
from vnetbench.terminal.machine_output import (
    JsonFile,
    JsonToStdout,
    emit_json,
    people_on_stderr,
)
from vnetbench.terminal.ui import err_console, note, out_console


@guarded
def ab(
    scenario: Annotated[str, typer.Argument(help="The scenario, e.g. throughput or join.")],
    a: Annotated[list[str] | None, typer.Option(
        "--a", help="Arm A's changes to the topology, KEY=VALUE (repeatable); none: the "
                    "topology as it is.")] = None,
    b: Annotated[list[str] | None, typer.Option(
        "--b", help="Arm B's changes, KEY=VALUE (repeatable); none: B is A (an A/A, which "
                    "measures this machine's noise floor).")] = None,
    topology_file: TopologyOption = DEFAULT_TOPOLOGY,
    rounds: Annotated[int, typer.Option(
        help="Rounds; each brings A and B up once, in the order AB, BA, AB, ... "
             "(6 to 100: vnetbench.runs.ab.AbSession).")] = 8,
    confirm: Annotated[bool, typer.Option(
        "--confirm/--no-confirm",
        help="When a judged metric is close to a verdict, add rounds (a group-sequential "
             "design that keeps the 5 % false-alarm rate: docs/ab.md); --no-confirm: "
             "exactly --rounds.")] = True,
    max_rounds: Annotated[int | None, typer.Option(
        help="Most rounds when confirming (default twice --rounds; --rounds to 100: "
             "vnetbench.runs.ab.AbSession).")] = None,
    order: Annotated[str, typer.Option(
        help="Each round's order: alternate (AB, BA, AB, ...) or random (a fair coin per "
             "round, seed in run.json: pairs symmetric whatever the machine does in time; "
             "docs/ab.md).")] = "alternate",
    passes: Annotated[int, typer.Option(help="Passes per bring-up (averaged; bounded as "
                                        "the passes setting is).")] = 1,
    seconds: Annotated[float | None, typer.Option(help="TCP stream length.")] = None,
    min_effect: Annotated[str, typer.Option(
        help="Smallest change that gets a verdict (a smaller one is 'no change').")] = "5%",
    judge_all: Annotated[bool, typer.Option(
        "--all", help="Judge the metrics declared noisy too (retransmits, mdev, CPU).")]
    = False,
    out: Annotated[Path | None, typer.Option(help=OUT_HELP)] = None,
    summary: Annotated[Path | None, typer.Option(
        help="Append the outcome and verdict table as Markdown to this file (a CI job "
             "summary, e.g. $GITHUB_STEP_SUMMARY; never the topology: refused).")] = None,
    as_json: JsonToStdout = False,
    json_file: JsonFile = None,
) -> None:
    """Measure two variants in one session, their bring-ups interleaved, and judge
    each metric over the pairs, adding rounds to confirm a verdict near the line
    (exit 1 when B is worse on a judged metric). --json/--json-file: the verdicts,
    verdicts.csv's rows (the table and verdict line then go to stderr)."""
    from vnetbench.report.ab import read_verdicts, verdict_summary
    from vnetbench.report.gate_summary import append_summary, check_summary_file
    from vnetbench.report.tables import markdown
    from vnetbench.runs.ab import ab_session, make_arms, round_order, run_ab
    from vnetbench.scenarios import get_scenario
    from vnetbench.terminal.outputs import Output, check_outputs

    effect = parse_fraction(min_effect, "--min-effect")
    session = ab_session(rounds, max_rounds, confirm, round_order(order))
    command_line = {"passes": passes, **({"seconds": seconds} if seconds is not None else {})}
    arms = make_arms(read_topology(topology_file, command_line), a or [],
                     b if b is not None else None, command_line)
    chosen = get_scenario(scenario)
    inputs = file_inputs(topology=topology_file)
    if json_file is not None:
        check_outputs("ab", [Output("--json-file", json_file, must_exist=True)], inputs)
    if summary is not None:
        check_outputs("ab", [Output("--summary", summary, must_exist=True)], inputs)
        check_summary_file(summary)
    with people_on_stderr(as_json):  # each pass's result line
        directory = run_ab(chosen, arms, session,
                           out_directory(out, command="ab", inputs=inputs), effect, judge_all)
    table, verdict, worse = verdict_summary(directory)
    if as_json or json_file:
        emit_json(read_verdicts(directory).to_json(orient="records", indent=2), as_json,
                  json_file)
    shown = err_console if as_json else out_console
    shown.print(markdown(table))
    shown.print(verdict, soft_wrap=True)
    note(f"results: {directory}")
    if summary is not None:
        append_summary(directory, summary)
    if worse:
        raise typer.Exit(1)

