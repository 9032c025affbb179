"""`vnetbench compare`: NEW/OLD per metric, judged against the noise floor."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from vnetbench.commands.common import guarded, parse_fraction
from vnetbench.errors import UserError
from vnetbench.terminal.machine_output import JsonFile, JsonToStdout, emit_json
from vnetbench.terminal.ui import err_console, out_console

if TYPE_CHECKING:
    import pandas as pd

HOW_TO_MEASURE_A_FLOOR = (
    "Measure this machine's noise floor with an A/A, 'vnetbench ab SCENARIO' with no --b "
    "(the same build twice, interleaved; it writes noise.json into its results "
    "directory), and give that directory as --noise AA_DIR; or measure both builds in "
    "one session with 'vnetbench ab'.")


@guarded
def compare(
    old: Annotated[Path, typer.Argument(help="The reference results directory.")],
    new: Annotated[Path, typer.Argument(help="The results directory to judge.")],
    fail_over: Annotated[str, typer.Option(help="Exit 1 on a regression beyond this.")]
    = "5%",
    noise: Annotated[Path | None, typer.Option(
        help="An A/A directory (vnetbench ab with no --b): changes within its noise floor "
             "are no change. Default: OLD's or NEW's own noise.json, if either has one.")]
    = None,
    require_noise_floor: Annotated[bool, typer.Option(
        "--require-noise-floor",
        help="Exit 2 when there is no noise floor to judge with (for CI), instead of "
             "showing the differences unjudged.")]
    = False,
    judge_all: Annotated[bool, typer.Option(
        "--all", help="Judge the metrics declared noisy too (retransmits, mdev, CPU).")]
    = False,
    as_json: JsonToStdout = False,
    json_file: JsonFile = None,
) -> None:
    """NEW/OLD per metric with a bootstrap interval over passes, judged only against
    this machine's noise floor: without one, the differences are shown, not judged.
    --json/--json-file: the table's rows (the markdown table is then not printed)."""
    from vnetbench.report.ab import noise_near
    from vnetbench.report.compare import (
        compare_directories,
        judged,
        regressions,
        without_floor,
    )
    from vnetbench.report.tables import markdown
    from vnetbench.terminal.outputs import Output, check_outputs, results_inputs

    threshold = parse_fraction(fail_over, "--fail-over")
    check_outputs("compare", [Output("--json-file", json_file, must_exist=True)]
                  if json_file else [],
                  results_inputs([old, new]) + results_inputs([noise] if noise else [],
                                                              "--noise"))
    floor, source = noise_near(noise, [old, new])
    if require_noise_floor and not floor:
        raise UserError(f"compare --require-noise-floor: no noise floor for {old} and {new} "
                        "(neither holds a noise.json and --noise was not given), and two "
                        "results directories differ by this machine's drift between "
                        f"sessions, which only a measured floor tells from a change. "
                        f"{HOW_TO_MEASURE_A_FLOOR}")
    table = compare_directories(old, new, threshold, floor, judge_all)
    unfloored = without_floor(table)
    if require_noise_floor and not unfloored.empty and judged(table)["noise_pct"].isna().all():
        raise UserError(f"compare --require-noise-floor: the noise floor ({source}) has no "
                        "figure for any metric compared here (it was measured on another "
                        f"scenario or overlay). {HOW_TO_MEASURE_A_FLOOR}")
    if as_json or json_file:
        emit_json(table.to_json(orient="records", indent=2), as_json, json_file)
    if not as_json:
        shown = table.assign(**{c: table[c].map(lambda v: f"{v:.3f}")
                                for c in ("ratio", "ci_low", "ci_high")})
        out_console.print(markdown(shown.drop(columns=["noise_pct"])), markup=False)
    say_what_was_judged(floor, source, unfloored)
    worse = regressions(table)
    if not worse.empty:
        err_console.print(f"{len(worse)} regression(s) beyond {fail_over} and this machine's "
                          "noise: " + ", ".join(f"{r.scenario}/{r.overlay}/{r.metric}"
                                                for r in worse.itertuples()),
                          highlight=False, markup=False)
        raise typer.Exit(1)


def say_what_was_judged(floor: dict[str, float], source: str,
                        unfloored: pd.DataFrame) -> None:
    """Which noise floor judged, and what could not be judged for want of one."""
    if not floor:
        said("cannot judge: no noise floor measured. OLD and NEW are two sessions, and "
             "this machine's drift between sessions (which core, what else runs) is "
             "unknown and can be larger than a change, so the differences above are shown "
             "without verdicts (exit status 0). " + HOW_TO_MEASURE_A_FLOOR)
        return
    said(f"noise floor: {source}")
    if not unfloored.empty:
        said(f"cannot judge {len(unfloored)} metric(s) the noise floor has no figure for "
             "(shown without verdicts): " + ", ".join(
                 f"{r.scenario}/{r.overlay}/{r.metric}" for r in unfloored.itertuples()))


def said(message: str) -> None:
    """A line on stderr, its paths and names printed as they are (no Rich markup)."""
    err_console.print(message, highlight=False, markup=False)
