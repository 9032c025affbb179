"""Did a refactor move anything measured? Two checkouts of vnetbench, interleaved.

`vnetbench ab` interleaves two arms of one build; this runs two builds: each round
brings every overlay up once with OLD's code (arm A) and once with NEW's (arm B), in
the order AB, BA, AB, ... as `ab` does, each bring-up a `vnetbench run SCENARIO
--overlay X --passes 1 --no-baseline` into its own directory. `table` judges per
overlay and metric with `ab`'s own code (vnetbench/report/ab.py's verdict_table).

    python -m research.builds_ab run OLD NEW OUT --scenario throughput \\
        --overlay baseline --overlay wireguard --rounds 6 -- --seconds 3
    python -m research.builds_ab table OUT

OUT/bringups.csv gets a row per bring-up (command, exit status, time, directory); a
bring-up it records as measured (exit 0, or 1: a pass failed, kept and left out of the
table) is not run again, so a session stopped part-way resumes where it stopped.
OUT/session.json holds the session's arguments: resuming with others is refused rather
than mixing two sessions' rounds.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import pandas as pd

from vnetbench.analysis.results import PARQUET, load_results
from vnetbench.core.outcome import State
from vnetbench.core.schema import METRIC, OVERLAY, ROUND, SCENARIO, STATE, VARIANT, parameter_column
from vnetbench.core.units import parse_percent
from vnetbench.report.ab import verdict_table
from vnetbench.runs.ab import schedule

PYTHON = "/work/main/.venv/bin/python"  # the main venv; PYTHONPATH picks the checkout
BRINGUPS = "bringups.csv"
SESSION = "session.json"
CHECKOUTS = {"A": "old", "B": "new"}
# a pass in one of these states says the bring-up went wrong (not applicable and not
# supported are the overlay's, the same in both builds)
NOT_OK = (State.FAILED, State.DEAD, State.PARTIAL)


class Refused(SystemExit):
    """Bad input: one paragraph on stderr, exit status 2."""

    def __init__(self, message: str) -> None:
        print(message, file=sys.stderr)
        super().__init__(2)


@dataclass(frozen=True)
class Session:
    old: str
    new: str
    scenario: str
    overlays: tuple[str, ...]
    rounds: int
    extra: tuple[str, ...]  # more `vnetbench run` arguments, both builds alike

    def checkout(self, arm: str) -> Path:
        return Path(self.old if arm == "A" else self.new)


@dataclass(frozen=True)
class BringUp:
    round: int
    arm: str  # "A" (old) or "B" (new)
    overlay: str

    @property
    def name(self) -> str:
        return f"r{self.round:02d}-{self.overlay}-{self.arm}"


@dataclass
class Record:
    """One row of bringups.csv."""

    name: str
    round: int
    arm: str
    overlay: str
    checkout: str
    command: str
    exit_code: int
    started: str
    seconds: float
    directory: str  # the run directory `vnetbench run` made, "" if none


# (command, working directory, environment, log file) -> exit status
Runner = Callable[[list[str], Path, dict[str, str], Path], int]


def run_command(command: list[str], cwd: Path, env: dict[str, str], log: Path) -> int:
    with log.open("w") as handle:
        return subprocess.run(command, cwd=cwd, env=env, stdout=handle,
                              stderr=subprocess.STDOUT, check=False).returncode


def imported_package(checkout: Path) -> Path:
    """Where `import vnetbench` finds the package when a checkout's code is run."""
    done = subprocess.run([PYTHON, "-c", "import vnetbench; print(vnetbench.__file__)"],
                          cwd=checkout, env=environment(checkout), capture_output=True,
                          text=True, check=False)
    return Path(done.stdout.strip()).parent


def environment(checkout: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(checkout)}


def plan(rounds: int, overlays: Sequence[str]) -> list[BringUp]:
    """Round by round in `ab`'s order (AB, BA, ...), every overlay's pair within its
    round, so drift over the session spreads over both builds alike."""
    order = schedule(rounds)
    return [BringUp(r, arm, overlay) for r in range(1, rounds + 1) for overlay in overlays
            for round_no, arm in order if round_no == r]


# `run`'s exit statuses of a bring-up that measured: 1 when a pass failed or its path
# was dead (vnetbench/terminal/exitstatus.py; a checkout older than that exits 0 for it); such
# a bring-up is kept, and load_bringups leaves it out
MEASURED = (0, 1)


def measured(record: Record) -> bool:
    return record.exit_code in MEASURED and bool(record.directory)


def command(session: Session, item: BringUp, out: Path) -> list[str]:
    return [PYTHON, "-m", "vnetbench", "run", session.scenario, "--overlay", item.overlay,
            "--passes", "1", "--no-baseline", *session.extra, "--out", str(out)]


def done_records(out: Path) -> list[Record]:
    path = out / BRINGUPS
    if not path.exists():
        return []
    with path.open() as handle:
        rows = list(csv.DictReader(handle))
    return [Record(**{**row, "round": int(row["round"]), "exit_code": int(row["exit_code"]),
                      "seconds": float(row["seconds"])}) for row in rows]  # type: ignore[arg-type]


def append(out: Path, record: Record) -> None:
    path = out / BRINGUPS
    new = not path.exists()
    with path.open("a", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=[f.name for f in fields(Record)])
        if new:
            writer.writeheader()
        writer.writerow(asdict(record))


def bring_up(session: Session, item: BringUp, out: Path, runner: Runner) -> Record:
    checkout = session.checkout(item.arm)
    target = out / "bringups" / item.name
    target.mkdir(parents=True, exist_ok=True)
    argv = command(session, item, target)
    started, clock = time.strftime("%Y-%m-%dT%H:%M:%S"), time.monotonic()
    exit_code = runner(argv, checkout, environment(checkout), target / "run.log")
    made = sorted(p.parent for p in target.glob(f"*/{PARQUET}"))
    return Record(item.name, item.round, item.arm, item.overlay, str(checkout),
                  " ".join(argv), exit_code, started, round(time.monotonic() - clock, 1),
                  str(made[-1]) if made else "")


def check_session(session: Session, out: Path) -> None:
    """A new session's arguments written down; a resumed one's must be the same."""
    path = out / SESSION
    given = json.loads(json.dumps(asdict(session)))
    if not path.exists():
        out.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(given, indent=1) + "\n")
    elif json.loads(path.read_text()) != given:
        raise Refused(f"{out} holds a session with other arguments ({path}): resume it "
                      "with the same ones, or give another OUT_DIR.")


def check_checkout(checkout: Path, locate: Callable[[Path], Path]) -> None:
    if not (checkout / "vnetbench" / "__init__.py").is_file():
        raise Refused(f"{checkout} is not a vnetbench checkout (no vnetbench/__init__.py): "
                      "give the directory of a clone or worktree.")
    found = locate(checkout)
    if found.resolve() != (checkout / "vnetbench").resolve():
        raise Refused(f"With PYTHONPATH={checkout}, {PYTHON} imports vnetbench from "
                      f"{found}, not from the checkout: its code would not be measured.")


def run(session: Session, out: Path, runner: Runner = run_command,
        locate: Callable[[Path], Path] = imported_package) -> list[Record]:
    """Every planned bring-up not yet done, in order; stops at the first that fails
    (an exit status other than 0 or 1), which the next `run` tries again."""
    if session.rounds < 1 or not session.overlays:
        raise Refused("Give --rounds 1 or more and at least one --overlay (ab judges "
                      "from 6 rounds).")
    for arm in CHECKOUTS:
        check_checkout(session.checkout(arm), locate)
    check_session(session, out)
    done = {r.name for r in done_records(out) if measured(r)}
    ran = []
    for item in plan(session.rounds, session.overlays):
        if item.name in done:
            continue
        print(f"{time.strftime('%H:%M:%S')} {item.name} ({CHECKOUTS[item.arm]})", flush=True)
        record = bring_up(session, item, out, runner)
        append(out, record)
        ran.append(record)
        if not measured(record):
            raise SystemExit(f"{item.name}: vnetbench run exited {record.exit_code}; see "
                             f"{out / 'bringups' / item.name / 'run.log'}")
    return ran


@dataclass(frozen=True)
class Loaded:
    frame: pd.DataFrame  # every kept bring-up's rows, variant A/B and var_round set
    excluded: list[str]  # bring-ups with a pass not ok


def load_bringups(out: Path) -> Loaded:
    frames, excluded = [], []
    for record in done_records(out):
        if not measured(record):
            continue
        frame = load_results(Path(record.directory))
        if frame[STATE].isin(NOT_OK).any():
            excluded.append(record.name)
            continue
        labels: dict[str, Any] = {VARIANT: record.arm, parameter_column(ROUND): record.round}
        frames.append(frame.assign(**labels))
    return Loaded(pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(),
                  excluded)


def judged(frame: pd.DataFrame, min_effect: float, judge_all: bool = False) -> pd.DataFrame:
    """`ab`'s verdict table per overlay (its noise_pct: the largest difference between
    a round's two builds, the A/A noise floor when the builds measure alike)."""
    tables = [verdict_table(rows, min_effect, judge_all, aa=True).assign(**{OVERLAY: overlay})
              for overlay, rows in frame.groupby(OVERLAY, sort=False)]
    return pd.concat(tables, ignore_index=True) if tables else pd.DataFrame()


def markdown_table(table: pd.DataFrame) -> str:
    lines = ["| metric | overlay | A median | B median | B/A [95 % interval] | p | pairs "
             "| verdict | round gap max |", "|---|---|---|---|---|---|---|---|---|"]
    for r in table.to_dict("records"):
        ratio = ("-" if pd.isna(r["ratio"])
                 else f"{r['ratio']:.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}]")
        p = "-" if pd.isna(r["p_value"]) else f"{r['p_value']:.3f}"
        gap = "-" if pd.isna(r["noise_pct"]) else f"{r['noise_pct']:.1f} %"
        verdict = f"{r['verdict']} ({r['reason']})" if r["reason"] else r["verdict"]
        lines.append(f"| {r[SCENARIO]}/{r[METRIC]} | {r[OVERLAY]} | {r['a_median']:.4g} "
                     f"| {r['b_median']:.4g} | {ratio} | {p} | {r['pairs']} | {verdict} "
                     f"| {gap} |")
    return "\n".join(lines)


def report(out: Path, min_effect: float, judge_all: bool = False) -> str:
    loaded = load_bringups(out)
    if loaded.frame.empty:
        return f"no bring-up of {out} measured anything yet"
    table = judged(loaded.frame, min_effect, judge_all)
    table = table.assign(reason=table["reason"].astype(object).fillna(""))
    session = json.loads((out / SESSION).read_text()) if (out / SESSION).exists() else {}
    head = (f"A: {session.get('old', 'old')}, B: {session.get('new', 'new')}; minimum "
            f"effect {100 * min_effect:g} %; excluded (a pass not ok): "
            f"{len(loaded.excluded)}{': ' + ', '.join(loaded.excluded) if loaded.excluded else ''}")
    return (f"{head}\n\n{markdown_table(table)}\n\nround gap max: the largest difference "
            "between a round's two builds (vnetbench.analysis.stats.noise_floor), the A/A noise "
            "floor where the builds measure alike.")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="action", required=True)
    start = sub.add_parser("run", help="run the session's bring-ups not yet done")
    start.add_argument("old", type=Path, help="checkout A (old build)")
    start.add_argument("new", type=Path, help="checkout B (new build)")
    start.add_argument("out", type=Path)
    start.add_argument("--scenario", required=True)
    start.add_argument("--overlay", action="append", required=True)
    start.add_argument("--rounds", type=int, default=6)
    show = sub.add_parser("table", help="judge the bring-ups on disk")
    show.add_argument("out", type=Path)
    show.add_argument("--min-effect", default="5%", help="as `vnetbench ab --min-effect`")
    show.add_argument("--all", dest="judge_all", action="store_true",
                      help="judge the metrics declared noisy too")
    given = list(sys.argv[1:] if argv is None else argv)
    split = given.index("--") if "--" in given else len(given)
    args = parser.parse_args(given[:split])  # after --: more `vnetbench run` arguments
    if args.action == "run":
        session = Session(str(args.old.resolve()), str(args.new.resolve()), args.scenario,
                          tuple(args.overlay), args.rounds, tuple(given[split + 1:]))
        run(session, args.out.resolve())
        print(report(args.out.resolve(), 0.05))
    else:
        print(report(args.out, min_effect(args.min_effect), args.judge_all))


def min_effect(text: str) -> float:
    try:
        return parse_percent(text) / 100
    except ValueError as error:
        raise Refused(f"--min-effect {text}: {error}.") from None


if __name__ == "__main__":
    main()
