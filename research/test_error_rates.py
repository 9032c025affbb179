"""research/error_rates.py, the campaign behind docs/studies/2026-12-ab.md's error-rate tables: its
plan and its arms, which decide what each session measures; and the sessions it kept
(research/data/error-rates, real `ab` sessions): their verdicts are the design's, and the
docs publish what they say."""

from __future__ import annotations

import functools
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from research.error_rates import (
    CEILING_SHARE,
    KEPT,
    KEPT_FILES,
    TRIES,
    Only,
    PairSigns,
    Planned,
    Session,
    append,
    arms,
    below,
    by_position,
    done_sessions,
    false_verdict_shares,
    first_arms,
    fixed_verdicts,
    flip_null,
    pair_signs,
    per_metric_lines,
    plan,
    record,
    rounds_chosen_rate,
    session_metrics,
    symmetry,
    symmetry_table,
    tables,
)
from vnetbench.analysis.results import load_results
from vnetbench.analysis.runrecord import read_record
from vnetbench.analysis.sequential import plan_for
from vnetbench.report.ab import VERDICTS_FILE, judge

KEPT_SESSIONS = done_sessions(KEPT)
DOCS = Path(__file__).resolve().parents[1] / "docs" / "studies" / "2026-12-ab.md"
# the three tests of the A/As' symmetry read it once, on one pytest-xdist worker (it
# judges every kept A/A's rounds again: 2 s each time)
SYMMETRY = pytest.mark.xdist_group("error-rates-symmetry")


@functools.cache
def kept_symmetry() -> tuple[PairSigns, ...]:
    return tuple(symmetry(KEPT))


def session(overlay: str, tcp: float | None, scenario: str = "throughput") -> Session:
    return Session(key=f"aa/{overlay}/{scenario}/0/1", kind="aa", overlay=overlay,
                   scenario=scenario, cut_pct=0, attempt=1, exit_code=0, minutes=3.0,
                   directory="d", rounds=8, judged=5, no_change=5, worse=0, better=0,
                   unknown=0, tcp_verdict="no change", tcp_ratio=1.0, tcp_a_median=tcp,
                   fixed_judged=5, fixed_worse=0, fixed_better=0, fixed_tcp_verdict="no change",
                   a_rate_mbit=None, worse_metrics="")


def test_every_a_a_comes_before_the_cuts_that_need_its_ceiling() -> None:
    items = list(plan(vnet=True))
    kinds = [item.kind for item in items]
    assert kinds == sorted(kinds)  # "aa" < "cut": no cut before the last A/A
    assert len({item.key for item in items}) == len(items)
    assert sum(item.overlay == "vnet" for item in items) == 3  # join only, 3 tries
    assert {item.scenario for item in items if item.overlay == "vnet"} == {"join"}


def test_a_cut_shapes_both_arms_near_the_ceiling_and_b_below_a() -> None:
    done = [session("nebula", 400.0), session("nebula", 500.0), session("nebula", None),
            session("nebula", 900.0, scenario="room")]
    args, rate = arms(Planned("cut", "nebula", "throughput", 10, 1), done)
    assert rate == round(450 * CEILING_SHARE)  # the throughput A/As' median, not the room's
    assert rate is not None
    a_rate, b_rate = f"backbone.rate={rate:g}mbit", f"backbone.rate={round(rate * 0.9, 1):g}mbit"
    assert args[args.index(a_rate) - 1] == "--a" and args[args.index(b_rate) - 1] == "--b"
    with pytest.raises(SystemExit, match="ceiling is unknown"):
        arms(Planned("cut", "tinc", "throughput", 10, 1), done)


def test_an_a_a_gives_both_arms_the_same_room() -> None:
    args, rate = arms(Planned("aa", "tinc", "room", 0, 1), [])
    assert rate is None and "--b" not in args  # no --b: B is A, whatever A holds
    assert "machines=50" in args


def test_sessions_written_are_read_back_whole(tmp_path: Path) -> None:
    written = [session("tinc", 700.5), session("wireguard", None)]
    for one in written:
        append(tmp_path, one)
    assert done_sessions(tmp_path) == written


def test_a_sitting_takes_only_its_part_of_the_plan() -> None:
    only = Only(("wireguard",), ("throughput",), (5,))
    items = [item for item in plan(vnet=True) if only.takes(item)]
    assert {(item.kind, item.cut_pct) for item in items} == {("aa", 0), ("cut", 5)}
    assert {(item.overlay, item.scenario) for item in items} == {("wireguard", "throughput")}
    assert len(items) == 2 * TRIES
    assert len([item for item in plan(vnet=True) if Only().takes(item)]) == len(
        list(plan(vnet=True)))


def test_a_later_sitting_s_tries_keep_their_keys_apart() -> None:
    first = {item.key for item in plan(vnet=False)}
    later = list(plan(vnet=False, first_try=TRIES + 1))
    assert {item.attempt for item in later} == set(range(TRIES + 1, 2 * TRIES + 1))
    assert first.isdisjoint(item.key for item in later) and len(later) == len(first)


def test_sessions_under_the_new_rule_get_their_own_rows() -> None:
    """A/As judged with the mean RTT shown are counted apart from those that judged it."""
    old, new = session("tinc", 200.0), replace(session("tinc", 200.0), rule="mean RTT shown",
                                               judged=4, worse=1)
    room = replace(session("tinc", None, scenario="room"), rule="mean RTT shown")
    rows = tables([old, new, room]).splitlines()
    assert "| tinc | throughput | 1 | 5 | 0 |" in rows[2]
    assert "| tinc (mean RTT shown) | throughput | 1 | 4 | 1 |" in rows[3]
    assert "| tinc | room | 1 | 5 | 0 |" in rows[4]  # no mean RTT to show or judge there


def test_record_adds_what_the_copy_lacks_and_only_that(tmp_path: Path) -> None:
    kept_one = KEPT_SESSIONS[0]
    campaign, copy = tmp_path / "campaign", tmp_path / "kept"
    results = shutil.copytree(KEPT / kept_one.directory, campaign / "sessions" / "s1")
    (results / "raw.txt").write_text("raw output stays with the campaign")
    other = replace(kept_one, key="aa/tinc/join/0/9", directory="x")
    append(campaign, replace(kept_one, directory=str(results)))
    copy.mkdir()
    append(copy, other)  # an earlier sitting's, already kept
    added = record(campaign, copy)
    assert [s.key for s in added] == [kept_one.key]
    folder = copy / added[0].directory
    assert sorted(p.name for p in folder.iterdir()) == sorted(KEPT_FILES)
    assert [s.key for s in done_sessions(copy)] == [other.key, kept_one.key]
    assert record(campaign, copy) == []  # nothing new the second time


def test_the_kept_campaign_holds_a_a_and_cut_sessions() -> None:
    assert {s.kind for s in KEPT_SESSIONS} == {"aa", "cut"}
    for one in KEPT_SESSIONS:
        assert sorted(p.name for p in (KEPT / one.directory).iterdir()) == sorted(KEPT_FILES)


@pytest.mark.parametrize("kept", KEPT_SESSIONS, ids=lambda s: s.key)
def test_each_kept_verdict_is_the_designs(kept: Session) -> None:
    """Judged again, each session's metrics get the verdicts and rounds ab wrote under
    the plan run.json records, and the fixed design's the ones kept beside them."""
    directory = KEPT / kept.directory
    header = read_record(directory)
    assert header.confirm is not None and header.min_effect is not None
    looks = header.confirm["looks"]
    planned = plan_for(looks[0], looks[-1])
    assert list(planned.looks) == looks and planned.boundary_p == header.confirm["boundary_p"]
    frame = load_results(directory)
    said = pd.read_csv(directory / VERDICTS_FILE).set_index("metric")
    judged = [m for m in session_metrics(directory, frame) if m.judged]
    assert len(judged) == kept.judged
    # the rule it ran under: throughput's mean RTT judged before it was declared noisy
    names = {m.name for m in judged}
    assert ("rtt_mean_ms" in names) == (kept.scenario == "throughput"
                                        and kept.rule == "mean RTT judged")
    for metric in judged:
        judgement = judge(metric, header.min_effect, planned)
        assert judgement.comparison.verdict.value == said.loc[metric.name, "verdict"]
        assert judgement.rounds == said.loc[metric.name, "rounds"]
    fixed = fixed_verdicts(frame, header.min_effect, bool(header.aa)).set_index("metric")
    if kept.scenario == "throughput":  # a room or join A/A has no TCP
        assert fixed.loc["tcp_mbit", "verdict"] == kept.fixed_tcp_verdict
    else:
        assert "tcp_mbit" not in fixed.index and kept.fixed_tcp_verdict == ""


def test_docs_publish_what_the_kept_campaign_says() -> None:
    assert tables(KEPT_SESSIONS) in DOCS.read_text()
    assert f"\n  {false_verdict_shares(KEPT_SESSIONS)}\n" in DOCS.read_text()


def test_a_session_kept_from_when_the_mean_rtt_was_judged_loses_only_its_verdict() -> None:
    """The rule dropped the mean RTT from throughput's judged metrics: an older session
    counts one judged metric less and its mean-RTT verdict not at all; a room keeps all."""
    old = replace(session("wireguard", 400.0), judged=5, worse=2,
                  worse_metrics="rtt_mean_ms:worse;tcp_mbit:better")
    now = replace(old, key="aa/nebula/throughput/0/1", judged=4, worse=1,
                  worse_metrics="tcp_mbit:worse", rule="mean RTT shown")
    room = replace(session("tinc", None, "room"), judged=13, worse_metrics="room_p50_ms:worse")
    assert false_verdict_shares([old, now, room]) == (
        "A/A verdicts under the rule, of judged metrics (exact 95 % intervals): "
        "all 3 of 21 (14.3 %, 3.0-36.3 %); throughput 2 of 8 (25.0 %, 3.2-65.1 %); "
        "room 1 of 13 (7.7 %, 0.2-36.0 %)")
    assert false_verdict_shares([]) == "no A/A yet"


@SYMMETRY
def test_the_a_as_pairs_are_tested_once_over_all_rounds() -> None:
    """Only metrics that varied (loss never did: no verdict possible), each at every
    round of its session, and docs/studies/2026-12-ab.md gives the counts the kept sessions say."""
    found = list(kept_symmetry())
    aa = [s for s in KEPT_SESSIONS if s.kind == "aa"]
    throughput = [f for f in found if "/throughput/" in f.session]
    assert {f.metric for f in throughput} == {"tcp_mbit", "rtt_mean_ms", "rtt_min_ms"}
    # the mean RTT only where the session judged it (kept before it was declared noisy)
    judged_then = {s.key: 3 if s.rule == "mean RTT judged" else 2
                   for s in aa if s.scenario == "throughput"}
    assert len(throughput) == sum(judged_then.values())
    assert all(f.metric != "rtt_mean_ms" or judged_then[f.session] == 3 for f in throughput)
    rounds = {s.key: s.rounds for s in aa}
    assert all(f.above + f.below <= rounds[f.session] for f in found)
    assert {f.order for f in found} == {s.order for s in aa}
    summary = symmetry_table(found, draws=20).split("\n\n")[-1]
    assert summary.startswith("alternate order: p < 0.05 in ")
    # docs/studies/2026-12-ab.md's P is of 5000 draws: not redrawn here
    for line in summary.splitlines():
        count, null = line.split("; as many or more")
        assert count in DOCS.read_text() and "flipped by a coin: P = " in null


@SYMMETRY
def test_second_against_first_turns_the_rounds_b_went_first() -> None:
    """A random-order session's ratios, turned to second/first: the rounds where B went
    first change sign, the others stay; docs/studies/2026-12-ab.md gives the count they make."""
    sessions = {s.key: s for s in KEPT_SESSIONS}
    found = [f for f in kept_symmetry() if f.order == "random"]
    turned = by_position(KEPT, found)
    assert len(turned) == len(found) == 36
    for f, t in zip(found, turned, strict=True):
        first = first_arms(KEPT, sessions[f.session])
        assert "A" in first and "B" in first  # a coin per round: both arms led some
        for arm, ratio, position in zip(first, f.log_ratios, t.log_ratios, strict=False):
            if not np.isnan(ratio):
                assert position == (ratio if arm == "A" else -ratio)
    low = sum(t.p_value < 0.05 for t in turned)
    assert f"the first: p < 0.05 in {low} of 36;" in DOCS.read_text()


def session_of(name: str, metrics: dict[str, list[float]]) -> list[PairSigns]:
    """A made-up A/A: log(B/A) per round of each metric."""
    return [pair_signs(name, metric, "random", np.array(ratios))
            for metric, ratios in metrics.items()]


def test_a_lean_to_one_arm_in_every_session_is_unlikely_under_the_flips() -> None:
    """B above A in all 8 rounds of both metrics of 3 sessions: 6 tests at the smallest
    p 8 pairs can give (0.008); flipped rounds give 6 again only when a session's 8
    coins leave at most its smallest ratios on the other side (10 patterns in 256) in
    all 3 sessions, 6 in 100,000 draws: P near 1/(1 + draws)."""
    lean = [0.01 * (k + 1) for k in range(8)]
    found = [f for n in range(3) for f in session_of(f"s{n}", {"tcp": lean, "rtt": lean})]
    assert below(found) == 6
    assert flip_null(found, draws=400) < 0.01


def test_pairs_with_no_lean_are_likely_under_the_flips() -> None:
    """Signs that alternate: no test below 0.05, so every draw has as many (P = 1)."""
    even = [0.01 * (k + 1) * (-1) ** k for k in range(8)]
    found = session_of("s", {"tcp": even, "rtt": even})
    assert below(found) == 0 and flip_null(found, draws=50) == 1.0


def test_per_metric_counts_are_binomial_over_sessions() -> None:
    """One test per metric per session, sessions independent: 3 of 3 below 0.05 has
    P = 0.05 ** 3 (0.000 at three decimals), 0 of 3 is certain; two orders are
    counted apart and together."""
    lean = [0.01 * (k + 1) for k in range(8)]
    even = [0.01 * (k + 1) * (-1) ** k for k in range(8)]
    found = [pair_signs(f"s{n}", metric, order, np.array(ratios))
             for n, order in enumerate(("alternate", "random", "random"))
             for metric, ratios in (("tcp", lean), ("rtt", even))]
    assert per_metric_lines(found) == [
        "tcp: p < 0.05 in alternate 1 of 1 (P = 0.050), random 2 of 2 (P = 0.003), "
        "both 3 of 3 (P = 0.000)",
        "rtt: p < 0.05 in alternate 0 of 1 (P = 1.000), random 0 of 2 (P = 1.000), "
        "both 0 of 3 (P = 1.000)"]


@SYMMETRY
def test_docs_give_the_kept_a_as_per_metric_counts() -> None:
    throughput = [f for f in kept_symmetry() if "/throughput/" in f.session]
    for line in per_metric_lines(throughput):
        assert line in DOCS.read_text()


def test_confirmation_s_rounds_leave_the_all_rounds_test_at_5_percent() -> None:
    """symmetry tests each A/A once over all its rounds at 0.05, but confirmation chose
    how many rounds there were from the data (4 more while a metric is close), which
    can raise the share of such tests below 0.05 when nothing changed (testing at 0.05
    at each of the looks gives 8.5 %: docs/ab.md). Simulated with the rule itself,
    1000 sessions of 3 metrics, seeded: at most 5 % and two standard errors of the
    3000 tests (0.4 %), so the counts above can be read against 5 %."""
    assert rounds_chosen_rate(1000) <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / 3000)


def test_a_round_s_metrics_flip_together() -> None:
    """Two metrics that lean together in a session: the flips keep them together, so
    the count is 0 or 2 in every draw, never 1."""
    lean = [0.01 * (k + 1) for k in range(8)]
    found = session_of("s", {"tcp": lean, "rtt": lean})
    rng = np.random.default_rng(3)
    counts = {below(found, {"s": rng.choice([-1.0, 1.0], size=8)}) for _ in range(300)}
    assert counts <= {0, 2} and 0 in counts


def test_a_file_of_the_older_layout_gets_today_s_header(tmp_path: Path) -> None:
    """Sessions kept before `order` existed read as alternating; a row added later
    rewrites the file whole, so every row has every column."""
    older = pd.read_csv(KEPT / "sessions.csv", dtype=str, keep_default_na=False)
    older[older["order"] == "alternate"].drop(columns="order").to_csv(
        tmp_path / "sessions.csv", index=False)  # as kept before the column came
    assert "order" not in (tmp_path / "sessions.csv").read_text().splitlines()[0]
    old = done_sessions(tmp_path)
    assert {s.order for s in old} == {"alternate"}
    append(tmp_path, replace(old[0], key="aa/x/throughput/0/1/random", order="random"))
    again = done_sessions(tmp_path)
    assert again[:-1] == old and again[-1].order == "random"
