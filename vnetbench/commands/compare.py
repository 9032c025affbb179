"""`vnetbench compare`: NEW/OLD per metric, judged against the noise floor."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from vnetbench.commands.common import guarded, parse_fraction
from vnetbench.ui import err_console, note, out_console


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
    judge_all: Annotated[bool, typer.Option(
        "--all", help="Judge the metrics declared noisy too (retransmits, mdev, CPU).")]
    = False,
    json_out: Annotated[Path | None, typer.Option("--json", help="Also write JSON here.")]
    = None,
) -> None:
    """NEW/OLD per metric with a bootstrap interval over passes, judged against this
    machine's noise floor when one is known."""
    from vnetbench.report.ab import noise_near
    from vnetbench.report.compare import compare_directories, regressions
    from vnetbench.report.tables import markdown

    threshold = parse_fraction(fail_over, "--fail-over")
    floor, source = noise_near(noise, [old, new])
    table = compare_directories(old, new, threshold, floor, judge_all)
    if json_out:
        json_out.write_text(table.to_json(orient="records", indent=2))
    shown = table.assign(**{c: table[c].map(lambda v: f"{v:.3f}")
                            for c in ("ratio", "ci_low", "ci_high")})
    out_console.print(markdown(shown.drop(columns=["noise_pct"])))
    note(f"noise floor: {source}")
    worse = regressions(table)
    if not worse.empty:
        err_console.print(f"{len(worse)} regression(s) beyond {fail_over}: "
                          + ", ".join(f"{r.scenario}/{r.overlay}/{r.metric}"
                                      for r in worse.itertuples()))
        raise typer.Exit(1)

