"""The verdicts' own error rates, measured on real `vnetbench ab` sessions
(docs/studies/2026-12-ab.md).

Two kinds of session, each a row of the plan:

- **A/A**: an overlay against itself on throughput, room or join; any verdict is a
  false one.
- **cut**: throughput with the backbone shaped near the overlay's ceiling (A: 90 % of
  its unshaped TCP median in this campaign's A/As, B: that rate cut by 5, 10 or
  20 %); a "worse" TCP verdict catches it, "better" is the wrong sign.

Every session keeps its results directory; the campaign's `sessions.csv` gets one row
per finished session, so a campaign stopped part-way resumes where it stopped
(`python -m research.error_rates run DIR`, `--overlay`, `--scenario` and `--cut` taking a
part of the plan), and `table DIR` prints the Markdown tables and the A/As' shares of
false verdicts under the rule. `record DIR KEPT` adds
the finished sessions to the repository's copy (research/data/error-rates: sessions.csv
and each session's run.json, results.parquet and verdicts.csv, not its raw output),
which the unit tests and docs/studies/2026-12-ab.md read; a later sitting starts from it (copy its
sessions.csv into a new DIR: the sessions in it are not run again).
Each row also holds the verdicts the fixed design (the first 8 rounds, one test at
p < 0.05) gives on the same rounds, so confirmation and the fixed design are compared
on identical data.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import binom, binomtest

from vnetbench.analysis.results import load_results
from vnetbench.analysis.sequential import is_close, plan_for
from vnetbench.analysis.stats import Verdict, compare_rounds, signed_rank_p
from vnetbench.core.metrics import Better
from vnetbench.declared import catalogue
from vnetbench.report.ab import VERDICTS_FILE, MetricRounds, metric_rounds, verdict_table

KEPT = Path(__file__).parent / "data" / "error-rates"
OVERLAYS = ("wireguard", "openvpn", "tinc", "nebula")
AA_SCENARIOS = ("throughput", "room", "join")
CUTS = (5, 10, 20)
TRIES = 3
FIXED_ROUNDS = 8
CEILING_SHARE = 0.9  # A's backbone rate: this share of the overlay's unshaped TCP
# small rooms keep a session within minutes; both arms get them (an arm change of A
# alone would be an A/B)
ROOM = ("machines=50", "room_sizes=200,2048")
JOIN = ("machines=50",)
SECONDS = "3"
CUT_MIN_EFFECT = "2%"  # below the smallest cut, as docs/ab.md advises for catching one
KEPT_FILES = ("run.json", "results.parquet", "verdicts.csv")  # what the verdicts come from


@dataclass(frozen=True)
class Planned:
    kind: str  # "aa" or "cut"
    overlay: str
    scenario: str
    cut_pct: int  # 0 for an A/A
    attempt: int
    order: str = "alternate"  # ab --order: the rounds' order

    @property
    def key(self) -> str:
        key = f"{self.kind}/{self.overlay}/{self.scenario}/{self.cut_pct}/{self.attempt}"
        return key if self.order == "alternate" else f"{key}/{self.order}"


@dataclass
class Session:
    key: str
    kind: str
    overlay: str
    scenario: str
    cut_pct: int
    attempt: int
    exit_code: int
    minutes: float
    directory: str
    rounds: int
    judged: int
    no_change: int
    worse: int
    better: int
    unknown: int
    tcp_verdict: str
    tcp_ratio: float | None
    tcp_a_median: float | None
    fixed_judged: int
    fixed_worse: int
    fixed_better: int
    fixed_tcp_verdict: str
    a_rate_mbit: float | None
    worse_metrics: str
    order: str = "alternate"  # sessions kept before ab had --order alternated
    # which RTT throughput judged: the mean was declared noisy (shown, not judged) after
    # the sessions kept before this column, which judged it
    rule: str = "mean RTT judged"


def plan(vnet: bool, order: str = "alternate", first_try: int = 1) -> Iterator[Planned]:
    """A/As first (the cuts need each overlay's ceiling), tries interleaved so drift
    spreads over every overlay and scenario alike; tries numbered from `first_try` (a
    later campaign, e.g. under another rule, keeps the earlier sessions' keys apart)."""
    tries = range(first_try, first_try + TRIES)
    for attempt in tries:
        for scenario in AA_SCENARIOS:
            for overlay in OVERLAYS:
                yield Planned("aa", overlay, scenario, 0, attempt, order)
        if vnet:  # the public snapshot delivers no packet: join is what it can measure
            yield Planned("aa", "vnet", "join", 0, attempt, order)
    for attempt in tries:
        for cut in CUTS:
            for overlay in OVERLAYS:
                yield Planned("cut", overlay, "throughput", cut, attempt, order)


def done_sessions(campaign: Path) -> list[Session]:
    path = campaign / "sessions.csv"
    if not path.exists():
        return []
    with path.open() as handle:
        rows = list(csv.DictReader(handle))
    kinds = {f.name: f.type for f in fields(Session)}
    sessions = []
    for row in rows:
        values: dict[str, object] = {}
        for name, text in row.items():
            kind = str(kinds[name])
            if text == "" and "None" in kind:
                values[name] = None
            elif kind.startswith("int"):
                values[name] = int(text)
            elif kind.startswith("float"):
                values[name] = float(text)
            else:
                values[name] = text
        sessions.append(Session(**values))  # type: ignore[arg-type]
    return sessions


def append(campaign: Path, session: Session) -> None:
    """Adds a row; the whole file is written again, so a file of an older layout (before
    a column was added) gets today's header."""
    sessions = [*done_sessions(campaign), session]
    path = campaign / "sessions.csv"
    with (campaign / "sessions.csv.new").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=[f.name for f in fields(Session)])
        writer.writeheader()
        for row in sessions:
            writer.writerow({k: ("" if v is None else v) for k, v in asdict(row).items()})
    (campaign / "sessions.csv.new").replace(path)


def ceiling(sessions: list[Session], overlay: str) -> float | None:
    """The overlay's unshaped TCP: the median of its throughput A/As' A medians."""
    found = [s.tcp_a_median for s in sessions if s.kind == "aa" and s.overlay == overlay
             and s.scenario == "throughput" and s.tcp_a_median]
    return float(pd.Series(found).median()) if found else None


def arms(item: Planned, sessions: list[Session]) -> tuple[list[str], float | None]:
    if item.kind == "aa":
        extra = {"room": ROOM, "join": JOIN}.get(item.scenario, ())
        return ["--a", f"overlay={item.overlay}", *[x for e in extra for x in ("--a", e)]], None
    top = ceiling(sessions, item.overlay)
    if top is None:
        raise SystemExit(f"no throughput A/A of {item.overlay} yet: its ceiling is unknown")
    rate = round(top * CEILING_SHARE)
    cut = round(rate * (1 - item.cut_pct / 100), 1)
    return ["--a", f"overlay={item.overlay}", "--a", f"backbone.rate={rate}mbit",
            "--b", f"overlay={item.overlay}", "--b", f"backbone.rate={cut}mbit",
            "--min-effect", CUT_MIN_EFFECT], float(rate)


def run_session(item: Planned, campaign: Path, sessions: list[Session]) -> Session:
    arm_args, rate = arms(item, sessions)
    out = campaign / "sessions" / item.key.replace("/", "-")
    out.mkdir(parents=True, exist_ok=True)
    started = time.time()
    done = subprocess.run([sys.executable, "-m", "vnetbench", "ab", item.scenario, *arm_args,
                           "--seconds", SECONDS, "--order", item.order, "--out", str(out)],
                          stdout=(out / "ab.log").open("w"), stderr=subprocess.STDOUT,
                          env={**os.environ, "BENCH_TLS": "off"})
    minutes = (time.time() - started) / 60
    directories = sorted(p for p in out.iterdir() if p.is_dir())
    if done.returncode not in (0, 1) or not directories:
        raise SystemExit(f"{item.key}: ab exited {done.returncode}; see {out / 'ab.log'}")
    return summarise(item, directories[-1], done.returncode, minutes, rate)


def summarise(item: Planned, directory: Path, exit_code: int, minutes: float,
              rate: float | None) -> Session:
    header = json.loads((directory / "run.json").read_text())
    table = pd.read_csv(directory / "verdicts.csv")
    judged = table[table["judged"]]
    frame = load_results(directory)
    fixed = fixed_verdicts(frame, float(header["min_effect"]), bool(header["aa"]))
    tcp = table[table["metric"] == "tcp_mbit"]
    fixed_tcp = fixed[fixed["metric"] == "tcp_mbit"]
    counts = judged["verdict"].value_counts()
    return Session(
        key=item.key, kind=item.kind, overlay=item.overlay, scenario=item.scenario,
        cut_pct=item.cut_pct, attempt=item.attempt, exit_code=exit_code,
        minutes=round(minutes, 2), directory=str(directory), rounds=int(header["rounds"]),
        judged=len(judged), no_change=int(counts.get(Verdict.NO_CHANGE.value, 0)),
        worse=int(counts.get(Verdict.WORSE.value, 0)),
        better=int(counts.get(Verdict.BETTER.value, 0)),
        unknown=int(counts.get(Verdict.UNKNOWN.value, 0)),
        tcp_verdict=str(tcp["verdict"].iloc[0]) if len(tcp) else "",
        tcp_ratio=float(tcp["ratio"].iloc[0]) if len(tcp) else None,
        tcp_a_median=float(tcp["a_median"].iloc[0]) if len(tcp) else None,
        fixed_judged=int(fixed["judged"].sum()),
        fixed_worse=int((fixed[fixed["judged"]]["verdict"] == Verdict.WORSE.value).sum()),
        fixed_better=int((fixed[fixed["judged"]]["verdict"] == Verdict.BETTER.value).sum()),
        fixed_tcp_verdict=str(fixed_tcp["verdict"].iloc[0]) if len(fixed_tcp) else "",
        a_rate_mbit=rate,
        worse_metrics=";".join(f"{m}:{v}" for m, v in zip(judged["metric"], judged["verdict"],
                                                          strict=True)
                               if v in (Verdict.WORSE.value, Verdict.BETTER.value)),
        order=item.order, rule=rule_now())


def rule_now() -> str:
    """The rule this build judges throughput's RTT by (vnetbench/declared/throughput.py)."""
    return "mean RTT judged" if catalogue().judged("rtt_mean_ms") else "mean RTT shown"


def session_metrics(directory: Path, frame: pd.DataFrame | None = None) -> list[MetricRounds]:
    """A kept session's metrics, each judged as its own verdicts.csv says: the rule it
    ran under, whatever this build declares (`frame`: its results, when already read)."""
    said = pd.read_csv(directory / VERDICTS_FILE).set_index("metric")["judged"]
    frame = load_results(directory) if frame is None else frame
    return [replace(m, judged=bool(said.get(m.name, False)))
            for m in metric_rounds(frame, True)]


def fixed_verdicts(frame: pd.DataFrame, min_effect: float, aa: bool) -> pd.DataFrame:
    """The fixed design's verdicts on the session's first 8 rounds (one test each)."""
    first = frame[pd.to_numeric(frame["var_round"], errors="coerce") <= FIXED_ROUNDS]
    return verdict_table(first, min_effect, aa=aa, plan=None)


@dataclass(frozen=True)
class Only:
    """The part of the plan a run takes (empty: all of it), so that a campaign too long
    for one sitting is measured overlay by overlay, cut by cut."""

    overlays: tuple[str, ...] = ()
    scenarios: tuple[str, ...] = ()
    cuts: tuple[int, ...] = ()

    def takes(self, item: Planned) -> bool:
        return ((not self.overlays or item.overlay in self.overlays)
                and (not self.scenarios or item.scenario in self.scenarios)
                and (not self.cuts or item.kind == "aa" or item.cut_pct in self.cuts))


def run(campaign: Path, vnet: bool, budget_minutes: float, only: Only = Only(),
        order: str = "alternate", first_try: int = 1) -> None:
    campaign.mkdir(parents=True, exist_ok=True)
    deadline = time.time() + budget_minutes * 60
    for item in filter(only.takes, plan(vnet, order, first_try)):
        sessions = done_sessions(campaign)
        if item.key in {s.key for s in sessions}:
            continue
        if (campaign / "pause").exists() or time.time() > deadline:
            print(f"stopping before {item.key}", flush=True)
            return
        print(f"{time.strftime('%H:%M:%S')} {item.key}", flush=True)
        session = run_session(item, campaign, sessions)
        append(campaign, session)
        print(f"  {session.minutes} min, exit {session.exit_code}, rounds {session.rounds}, "
              f"judged {session.judged}: {session.worse} worse, {session.better} better; "
              f"TCP {session.tcp_verdict} {session.tcp_ratio}", flush=True)


def record(campaign: Path, kept: Path) -> list[Session]:
    """Adds the campaign's sessions that `kept` lacks to it, each with its KEPT_FILES in
    a folder named by its key (the session's `directory`); returns the ones added."""
    kept.mkdir(parents=True, exist_ok=True)
    known = {s.key for s in done_sessions(kept)}
    added = []
    for session in done_sessions(campaign):
        if session.key in known:
            continue
        folder = session.key.replace("/", "-")
        (kept / folder).mkdir(exist_ok=True)
        for name in KEPT_FILES:
            shutil.copy2(Path(session.directory) / name, kept / folder / name)
        added.append(replace(session, directory=folder))
        append(kept, added[-1])
    return added


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["run", "table", "record", "symmetry"])
    parser.add_argument("campaign", type=Path)
    parser.add_argument("kept", type=Path, nargs="?", default=KEPT,
                        help="record: the repository's copy")
    parser.add_argument("--vnet", action="store_true", help="add vNet's join A/As")
    parser.add_argument("--budget-minutes", type=float, default=600)
    parser.add_argument("--order", choices=["alternate", "random"], default="alternate",
                        help="ab --order for every session of this sitting")
    parser.add_argument("--overlay", action="append", default=[], help="only this overlay")
    parser.add_argument("--scenario", action="append", default=[], help="only this scenario")
    parser.add_argument("--cut", action="append", type=int, default=[],
                        help="only this cut (percent; A/As are kept)")
    parser.add_argument("--first-try", type=int, default=1,
                        help="number this sitting's tries from here (keys apart from earlier)")
    args = parser.parse_args()
    if args.action == "run":
        run(args.campaign, args.vnet, args.budget_minutes,
            Only(tuple(args.overlay), tuple(args.scenario), tuple(args.cut)), args.order,
            args.first_try)
    elif args.action == "record":
        added = record(args.campaign, args.kept)
        print(f"{len(added)} session(s) added to {args.kept}")
    elif args.action == "symmetry":
        found = symmetry(args.campaign)
        print(f"symmetry: {len(found)} tests; drawing 5000 round flips for each count "
              "(about 15 s each)", file=sys.stderr, flush=True)
        print(symmetry_table(found, positions=by_position(args.campaign, found)))
    else:
        sessions = done_sessions(args.campaign)
        print(tables(sessions), "", false_verdict_shares(sessions), sep="\n")


def tables(sessions: list[Session]) -> str:
    frame = pd.DataFrame([asdict(s) for s in sessions])
    if frame.empty:
        return "no sessions yet"
    lines = ["| overlay | scenario | A/A sessions | judged metrics | verdicts (false) | "
             "fixed 8 rounds: verdicts | mean rounds | minutes |",
             "|---|---|---|---|---|---|---|---|"]
    frame["overlay"] = frame["overlay"].where(frame["order"] == "alternate",
                                              frame["overlay"] + " (" + frame["order"] + " order)")
    # only throughput has a mean RTT: a room's or a join's row never names the rule
    unlabelled = (frame["rule"] == "mean RTT judged") | (frame["scenario"] != "throughput")
    frame["overlay"] = frame["overlay"].where(unlabelled,
                                              frame["overlay"] + " (" + frame["rule"] + ")")
    aa = frame[frame["kind"] == "aa"]
    for (overlay, scenario), group in aa.groupby(["overlay", "scenario"], sort=False):
        false = int(group["worse"].sum() + group["better"].sum())
        fixed = int(group["fixed_worse"].sum() + group["fixed_better"].sum())
        lines.append(f"| {overlay} | {scenario} | {len(group)} | {int(group['judged'].sum())} | "
                     f"{false} | {fixed} | {group['rounds'].mean():.1f} | "
                     f"{group['minutes'].mean():.1f} |")
    lines += ["", "| overlay | cut | A rate | sessions | TCP worse (caught) | TCP better "
              "(wrong sign) | fixed 8 rounds: caught | mean rounds | B/A |",
              "|---|---|---|---|---|---|---|---|---|"]
    cuts = frame[frame["kind"] == "cut"]
    order = {overlay: n for n, overlay in enumerate(dict.fromkeys(cuts["overlay"]))}
    cuts = cuts.sort_values(["overlay", "cut_pct"], key=lambda column: column.map(order)
                            if column.name == "overlay" else column, kind="stable")
    for (overlay, cut), group in cuts.groupby(["overlay", "cut_pct"], sort=False):
        lines.append(
            f"| {overlay} | {cut} % | {group['a_rate_mbit'].iloc[0]:.0f} Mbit/s | {len(group)} | "
            f"{(group['tcp_verdict'] == 'worse').sum()} | "
            f"{(group['tcp_verdict'] == 'better').sum()} | "
            f"{(group['fixed_tcp_verdict'] == 'worse').sum()} | {group['rounds'].mean():.1f} | "
            f"{', '.join(f'{r:.3f}' for r in group['tcp_ratio'])} |")
    return "\n".join(lines)



def under_the_rule(session: Session) -> tuple[int, int]:
    """An A/A's judged metrics and verdicts as the rule judges now: a throughput session
    kept from when the mean RTT was judged loses that metric and its verdict. A metric's
    verdict is its own at the look it stopped at, so no other verdict changes."""
    dropped = session.scenario == "throughput" and session.rule == "mean RTT judged"
    verdicts = [entry for entry in session.worse_metrics.split(";")
                if entry and not (dropped and entry.startswith("rtt_mean_ms:"))]
    return session.judged - dropped, len(verdicts)


def false_verdict_shares(sessions: list[Session]) -> str:
    """The A/As' share of judged metrics given a verdict under the rule, all and by
    scenario, each with its exact (Clopper-Pearson) 95 % interval."""
    aa = [s for s in sessions if s.kind == "aa"]

    def share(group: list[Session]) -> str:
        judged, verdicts = (sum(n) for n in zip(*map(under_the_rule, group), strict=True))
        low, high = binomtest(verdicts, judged).proportion_ci(method="exact")
        return (f"{verdicts} of {judged} ({100 * verdicts / judged:.1f} %, "
                f"{100 * low:.1f}-{100 * high:.1f} %)")

    if not aa:
        return "no A/A yet"
    scenarios = [f"{scenario} {share([s for s in aa if s.scenario == scenario])}"
                 for scenario in dict.fromkeys(s.scenario for s in aa)]
    return ("A/A verdicts under the rule, of judged metrics (exact 95 % intervals): "
            f"all {share(aa)}; " + "; ".join(scenarios))

@dataclass(frozen=True)
class PairSigns:
    """One judged metric of one A/A at all its rounds: how many pairs B was above and
    below A, and one signed-rank test of them all (no looks, no minimum effect)."""

    session: str
    metric: str
    above: int
    below: int
    p_value: float
    order: str = "alternate"
    # log(B/A) at each round (round r at index r - 1), nan where it cannot count (a
    # round missing, or the same value on both arms): what flip_null redraws
    log_ratios: tuple[float, ...] = ()


def symmetry(kept: Path) -> list[PairSigns]:
    """Are an A/A's pairs symmetric about no change, as the exact test assumes? Under
    it, about 5 % of these tests fall below 0.05 whatever the noise; metrics that never
    varied (no loss in any pass) are left out, since they cannot."""
    found = []
    for session in done_sessions(kept):
        if session.kind != "aa":
            continue
        for metric in session_metrics(kept / session.directory):
            if not metric.judged:
                continue
            with np.errstate(divide="ignore", invalid="ignore"):  # 0/0: no loss either side
                by_round = np.log(metric.b / metric.a)
            by_round[~np.isfinite(by_round) | (by_round == 0)] = np.nan
            if not np.isnan(by_round).all():
                found.append(pair_signs(session.key, metric.name, session.order, by_round))
    return found


def pair_signs(session: str, metric: str, order: str, by_round: np.ndarray) -> PairSigns:
    """The signs and the signed-rank test of one metric's log ratios by round (nan: a
    round that cannot count)."""
    ratios = by_round[~np.isnan(by_round)]
    return PairSigns(session, metric, int((ratios > 0).sum()), int((ratios < 0).sum()),
                     signed_rank_p(ratios), order, tuple(by_round.tolist()))


def first_arms(kept: Path, session: Session) -> list[str]:
    """The arm each round of a kept session brought up first (round r at index r - 1)."""
    header = json.loads((kept / session.directory / "run.json").read_text())
    first: dict[int, str] = {}
    for bring_up in header["schedule"]:
        first.setdefault(int(bring_up["round"]), str(bring_up["arm"]))
    return [first.get(r, "") for r in range(1, max(first, default=0) + 1)]


def by_position(kept: Path, found: list[PairSigns]) -> list[PairSigns]:
    """The same tests of the arm brought up second against the first (B/A where A went
    first, A/B where B did): does a round's position, not its arm, lean?"""
    sessions = {s.key: s for s in done_sessions(kept)}
    turned = []
    for f in found:
        first = first_arms(kept, sessions[f.session])
        signs = np.array([1.0 if arm == "A" else -1.0 for arm in first])
        ratios = np.array(f.log_ratios) * signs[:len(f.log_ratios)]
        turned.append(pair_signs(f.session, f"{f.metric} (second/first)", f.order, ratios))
    return turned


def below(found: list[PairSigns], signs: dict[str, np.ndarray] | None = None) -> int:
    """How many tests fall below 0.05, each round's ratios first multiplied by its sign
    (`signs[session][r - 1]`) when signs are given."""
    count = 0
    for f in found:
        ratios = np.array(f.log_ratios)
        if signs is not None:
            ratios = ratios * signs[f.session][:ratios.size]
        count += signed_rank_p(ratios[~np.isnan(ratios)]) < 0.05
    return count


def flip_null(found: list[PairSigns], draws: int = 5000, seed: int = 1) -> float:
    """How often a count of tests below 0.05 as large as the observed one comes when
    each round's B/A is flipped by a fair coin, all the round's metrics together: the
    count's null distribution when the arms are alike and rounds are independent, with
    a session's metrics as correlated as they were. With each round's order a coin this
    null is exact (the coin decides the sign); it is the right one for any order if
    nothing in time favours an arm. (1 + draws at least as large) / (1 + draws)."""
    rng = np.random.default_rng(seed)
    observed = below(found)
    rounds = {f.session: len(f.log_ratios) for f in found}
    larger = 0
    for _ in range(draws):
        signs = {session: rng.choice([-1.0, 1.0], size=n) for session, n in rounds.items()}
        larger += below(found, signs) >= observed
    return (1 + larger) / (1 + draws)


def symmetry_table(found: list[PairSigns], draws: int = 5000,
                   positions: list[PairSigns] | None = None) -> str:
    """The tests, then per order of the rounds how many fell below 0.05, and how
    likely as many are when the arms are alike (flip_null); with `positions`, the
    random-order sessions' second against first too."""
    lines = ["| A/A | metric | B above A | B below A | p, all rounds |", "|---|---|---|---|---|"]
    lines += [f"| {f.session} | {f.metric} | {f.above} | {f.below} | {f.p_value:.3f} |"
              for f in found]
    lines += ["", *per_metric_lines(found), ""]
    lines += summary_lines(found, draws)
    random_order = [f for f in positions or [] if f.order == "random"]
    if random_order:
        low = [f for f in random_order if f.p_value < 0.05]
        lines.append(f"random order, the arm brought up second against the first: p < 0.05 "
                     f"in {len(low)} of {len(random_order)}; as many or more by chance: "
                     f"P = {flip_null(random_order, draws):.3f} ({draws} draws)")
    return "\n".join(lines)


def summary_lines(found: list[PairSigns], draws: int) -> list[str]:
    """Per order of the rounds: how many tests fell below 0.05, and flip_null's P."""
    lines = []
    for order in dict.fromkeys(f.order for f in found):
        tested = [f for f in found if f.order == order]
        low = [f for f in tested if f.p_value < 0.05]
        metrics = ", ".join(sorted({f.metric for f in low})) or "none"
        lines.append(f"{order} order: p < 0.05 in {len(low)} of {len(tested)} ({metrics}); "
                     f"as many or more with each round's B/A flipped by a coin: "
                     f"P = {flip_null(tested, draws):.3f} ({draws} draws)")
    return lines


def per_metric_lines(found: list[PairSigns]) -> list[str]:
    """Per metric, its tests below 0.05 over the sessions of each order and of both.
    Sessions are independent and each gives one test per metric, below 0.05 at most 5 %
    of the time when its arms are alike (the exact test's p moves in steps): the count
    is then at most binomial(sessions, 0.05), whatever the noise. P: as many or more."""
    lines = []
    for metric in dict.fromkeys(f.metric for f in found):
        orders = list(dict.fromkeys(f.order for f in found if f.metric == metric))
        counts = []
        for order in [*orders, "both"] if len(orders) > 1 else orders:
            tested = [f for f in found if f.metric == metric and order in (f.order, "both")]
            low = sum(f.p_value < 0.05 for f in tested)
            counts.append(f"{order} {low} of {len(tested)} "
                          f"(P = {binom.sf(low - 1, len(tested), 0.05):.3f})")
        lines.append(f"{metric}: p < 0.05 in " + ", ".join(counts))
    return lines


def rounds_chosen_rate(sessions: int = 2000, metrics: int = 3, seed: int = 1) -> float:
    """Under no change, the share of symmetry's tests (one over all rounds, p < 0.05) when
    ab's confirmation chose how many rounds there were: 4 more after 8 and 12 while any
    judged metric is close. The rounds then depend on the data, which could raise that
    share above 5 %; this simulates it (each arm's value log-normal, 30 % spread, so
    every interval reaches past the 5 % minimum effect and confirmation runs whenever
    the p allows: the most looks the rule can take)."""
    plan, rng, low = plan_for(FIXED_ROUNDS, 2 * FIXED_ROUNDS), np.random.default_rng(seed), 0
    level = float(np.nextafter(plan.boundary_p, 1.0))
    for _ in range(sessions):
        a, b = np.exp(0.3 * rng.standard_normal((2, metrics, plan.most)))
        n = plan.looks[0]
        while any(is_close(compare_rounds(a[m, :n], b[m, :n], Better.HIGHER, 0.05, level),
                           n, plan, 0.05) for m in range(metrics)):
            n = plan.next_look(n)
        low += sum(signed_rank_p(np.log(b[m, :n] / a[m, :n])) < 0.05 for m in range(metrics))
    return low / (sessions * metrics)


if __name__ == "__main__":
    main()
