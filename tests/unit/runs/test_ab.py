"""`vnetbench ab`: the paired test over interleaved bring-ups, the arms' changes, the
schedule, and the noise floor `compare` judges with (on a recorded real A/A: the
baseline path, 6 rounds of one 2 s pass each, on this 2-core machine)."""

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from vnetbench.analysis.results import load_results
from vnetbench.analysis.runrecord import read_record
from vnetbench.analysis.stats import (
    Verdict,
    compare_rounds,
    compare_samples,
    hodges_lehmann,
    signed_rank_p,
)
from vnetbench.cli import app
from vnetbench.core.metrics import Better
from vnetbench.declared.room import RoomSettings
from vnetbench.errors import UserError
from vnetbench.model.topology import load_topology
from vnetbench.report.ab import noise_record, read_noise, verdict_table
from vnetbench.runs.ab import arm_topology, make_arms, schedule
from vnetbench.runtime.paths import TOPOLOGIES

runner = CliRunner()
TWO_SITES = TOPOLOGIES / "two-sites.yml"


def test_exact_signed_rank_p_is_scipys() -> None:
    from scipy.stats import wilcoxon  # here: scipy.stats took 0.9-1.5 s of each worker's
    # collection, for this one test
    rng = np.random.default_rng(3)
    for n in range(1, 13):
        for _ in range(20):
            d = rng.normal(0.02, 0.05, n)
            assert signed_rank_p(d) == pytest.approx(wilcoxon(d, method="exact").pvalue)


def test_hodges_lehmann_interval_is_the_4th_walsh_averages_at_8_pairs() -> None:
    # n = 8, two-sided 95 %: the critical W+ is 3, so the interval runs from the 4th
    # smallest to the 4th largest of the 36 Walsh averages.
    d = np.arange(1.0, 9.0)
    walsh = sorted((d[i] + d[j]) / 2 for i in range(8) for j in range(i, 8))
    centre, low, high = hodges_lehmann(d)
    assert (centre, low, high) == (4.5, walsh[3], walsh[-4])


def sessions(rounds: int, seed: int, b_factor: float = 1.0,
             drift: float = 0.15, noise: float = 0.03) -> tuple[np.ndarray, np.ndarray]:
    """Rounds as the machine gives them: a drift common to the two bring-ups of a
    round (which core, what else runs: CV 15 %, as seen here between runs) and
    each bring-up's own noise (3 %)."""
    rng = np.random.default_rng(seed)
    level = 1000 * (1 + drift * rng.standard_normal(rounds))
    a = level * (1 + noise * rng.standard_normal(rounds))
    b = b_factor * level * (1 + noise * rng.standard_normal(rounds))
    return a, b


def test_an_a_a_under_drift_rarely_gets_a_verdict() -> None:
    # The exact test's false-alarm rate is at most ALPHA = 5 % by construction, and the
    # minimum effect can only lower it: over 300 seeded A/As of 8 rounds, at most 5 %.
    alarms = sum(compare_rounds(*sessions(8, seed), Better.HIGHER, 0.05).verdict
                 is not Verdict.NO_CHANGE for seed in range(300))
    assert alarms / 300 <= 0.05


def test_the_bootstrap_over_passes_of_two_sessions_does_not_survive_drift() -> None:
    # What `compare OLD NEW` did alone: passes of one session against passes of another,
    # each session at its own level; most A/As of this kind get a verdict.
    rng = np.random.default_rng(7)
    alarms = 0
    for _ in range(100):
        old, new = (1000 * (1 + 0.15 * rng.standard_normal()) *
                    (1 + 0.03 * rng.standard_normal(5)) for _ in range(2))
        alarms += compare_samples(old, new, Better.HIGHER, 0.05).verdict is not \
            Verdict.NO_CHANGE
    assert alarms > 50


def test_a_ten_percent_slower_b_is_worse_despite_the_drift() -> None:
    # Within a round the drift cancels, so a 10 % drop stands far above 3 % noise.
    results = [compare_rounds(*sessions(8, seed, b_factor=0.9), Better.HIGHER, 0.05)
               for seed in range(100)]
    assert sum(r.verdict is Verdict.WORSE for r in results) >= 95
    assert all(r.verdict is not Verdict.BETTER for r in results)
    assert np.median([r.ratio for r in results]) == pytest.approx(0.9, abs=0.01)


def test_a_change_below_the_minimum_effect_is_no_change() -> None:
    a, b = sessions(8, 1, b_factor=0.97, drift=0.0, noise=0.001)
    result = compare_rounds(a, b, Better.HIGHER, 0.05)
    assert result.p_value < 0.05  # significant, and too small to act on
    assert result.verdict is Verdict.NO_CHANGE


def test_too_few_pairs_zeros_and_missing_sides() -> None:
    a, b = sessions(5, 2, b_factor=0.5)
    assert compare_rounds(a, b, Better.HIGHER, 0.05).verdict is Verdict.UNKNOWN
    same = compare_rounds([0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0], Better.LOWER, 0.05)
    assert same.verdict is Verdict.NO_CHANGE
    retransmits = compare_rounds([0, 2, 1, 0, 3, 1, 2, 1], [9, 12, 8, 10, 11, 9, 13, 10],
                                 Better.LOWER, 0.05)  # relative differences: A has zeros
    assert retransmits.verdict is Verdict.WORSE
    with_gaps = compare_rounds([1.0, np.nan, *[1.0] * 6], [1.0, 2.0, np.nan, *[1.0] * 5],
                               Better.HIGHER, 0.05)
    assert with_gaps.pairs == 6


def test_schedule_alternates_who_goes_first() -> None:
    assert schedule(4) == [(1, "A"), (1, "B"), (2, "B"), (2, "A"), (3, "A"), (3, "B"),
                           (4, "B"), (4, "A")]


def test_a_random_order_is_a_fair_coin_per_round_drawn_from_the_seed() -> None:
    """Each round both arms once, A first in about half the rounds (a fair coin: over
    2000 rounds 1000 +- 4.5 standard deviations, 1000 +- 100); the same seed gives the
    same order, and rounds added later (confirmation) are those the whole plan has."""
    drawn = schedule(2000, order="random", seed=7)
    rounds = [drawn[i:i + 2] for i in range(0, len(drawn), 2)]
    assert all({arm for _, arm in pair} == {"A", "B"} for pair in rounds)
    a_first = sum(pair[0][1] == "A" for pair in rounds)
    assert 900 <= a_first <= 1100
    assert schedule(16, order="random", seed=7) == drawn[:32]
    assert schedule(16, 9, order="random", seed=7) == drawn[16:32]
    assert schedule(16, order="random", seed=8) != drawn[:32]


def test_arm_changes_are_validated_like_the_file(tmp_path: Path) -> None:
    base = load_topology(TWO_SITES)
    arm = arm_topology(base, ["overlay=wireguard", "tunnel_mtu=1280", "backbone.rate=90mbit",
                              "option.wireguard.mtu=1380"], "--b")
    assert arm.overlay == "wireguard"
    assert arm.settings.tunnel_mtu == 1280
    assert arm.links.backbone.rate == 90_000_000
    assert arm.overlay_options["wireguard"]["mtu"] == 1380
    other = tmp_path / "other.yml"
    other.write_text(TWO_SITES.read_text().replace("name: two-sites", "name: other"))
    assert arm_topology(base, ["seconds=3", f"topology={other}"], "--a").name == "other"
    for wrong, named in [("tunnel_mtu=12", "tunnel_mtu"), ("colour=red", "colour"),
                         ("overlay=ipsec", "ipsec"), ("backbone.rate=fast", "backbone.rate"),
                         ("option.wireguard.keepalive=1", "keepalive"),
                         ("nonsense", "KEY=VALUE")]:
        with pytest.raises(UserError, match=named) as raised:
            arm_topology(base, [wrong], "--b")
        assert f"--b {wrong}" in str(raised.value)


def test_no_b_is_an_a_a_with_one_pass_per_bring_up() -> None:
    arms = make_arms(load_topology(TWO_SITES, {"passes": 1}), ["overlay=wireguard"], None,
                     {"passes": 1})
    assert [a.spec for a in arms] == [("overlay=wireguard",)] * 2
    assert all(a.topology.settings.passes == 1 for a in arms)


def test_cli_refuses_too_few_rounds_and_bad_arms_in_one_paragraph() -> None:
    for args, said in [(["--rounds", "4"], "--rounds 4"), (["--b", "mtu"], "--b mtu"),
                       (["--min-effect", "lots"], "--min-effect lots")]:
        result = runner.invoke(app, ["ab", "throughput", *args])
        assert result.exit_code == 2, result.output
        assert said in result.output and "Traceback" not in result.output


@pytest.fixture
def recorded_aa(data_copy: Callable[[str], Path]) -> Path:
    return data_copy("ab-aa-baseline")


def test_recorded_a_a_is_no_change_on_every_judged_metric(recorded_aa: Path) -> None:
    table = verdict_table(load_results(recorded_aa), 0.05, aa=True).set_index("metric")
    judged = table[table["judged"]]
    assert set(judged.index) >= {"tcp_mbit", "rtt_min_ms", "ping_loss"}
    assert table.loc["rtt_mean_ms", "verdict"] == "shown, not judged"
    assert set(judged["verdict"]) == {"no change"}
    assert table.loc["tcp_retransmits", "verdict"] == "shown, not judged"
    assert (table["pairs"] == 6).all()
    # the noise floor is the largest difference between a round's two sides
    assert 0 < table.loc["tcp_mbit", "noise_pct"] < 20


def test_noise_record_is_keyed_by_scenario_overlay_metric(recorded_aa: Path) -> None:
    record = noise_record(verdict_table(load_results(recorded_aa), 0.05, aa=True),
                          read_record(recorded_aa))
    assert record["metrics"]["throughput/baseline/tcp_mbit"]["pairs"] == 6
    (recorded_aa / "noise.json").write_text(json.dumps(record))
    assert read_noise(recorded_aa)["throughput/baseline/tcp_mbit"] == pytest.approx(
        record["metrics"]["throughput/baseline/tcp_mbit"]["noise_pct"])


def test_compare_judges_against_the_noise_floor(recorded_aa: Path, tmp_path: Path,
                                                data_copy: Callable[[str], Path]) -> None:
    old = data_copy("results-quick")
    floor = read_noise(recorded_aa)["throughput/baseline/tcp_mbit"]
    for factor, verdict, exit_code in [(1 - floor / 200, "within this machine's noise", 0),
                                       (1 - 2 * floor / 100 - 0.1, "beyond this machine", 1)]:
        new = tmp_path / f"new-{factor:.3f}"
        shutil.copytree(old, new)
        frame = load_results(new)
        frame.loc[frame.metric == "tcp_mbit", "value"] *= factor
        frame.to_parquet(new / "results.parquet", index=False)
        result = runner.invoke(app, ["compare", str(old), str(new), "--noise",
                                     str(recorded_aa), "--fail-over", "0.1%", "--json-file",
                                     str(tmp_path / "c.json")])
        rows = json.loads((tmp_path / "c.json").read_text())
        tcp = next(r for r in rows if r["metric"] == "tcp_mbit")
        assert verdict in tcp["reason"], tcp
        assert result.exit_code == exit_code, result.output


def test_compare_without_a_noise_floor_says_so(data_dir: Path) -> None:
    quick = data_dir / "results-quick"
    result = runner.invoke(app, ["compare", str(quick), str(quick)])
    assert result.exit_code == 0
    assert "cannot judge: no noise floor measured" in " ".join(result.output.split())
    result = runner.invoke(app, ["compare", str(quick), str(quick), "--noise", str(quick)])
    assert result.exit_code == 2 and "holds no noise.json" in result.output


def test_outside_load_is_counted_per_arm(recorded_aa: Path) -> None:
    from vnetbench.report.ab import outside_load_by_arm

    frame = load_results(recorded_aa)
    extra = frame[frame.metric == "tcp_mbit"].assign(metric="host_outside_cores", value=0.1)
    busy = extra["variant"].eq("B") & extra["var_round"].le(2)
    extra.loc[busy, "value"] = 0.9
    extra.loc[busy, "status"] = "measured under outside load: 0.90 cores busy ..."
    extra.loc[busy, "kinds"] = "outside load"  # as a pass writes it beside its status
    loads = outside_load_by_arm(pd.concat([frame, extra]))
    assert loads == {"A": {"passes": 6, "marked": 0, "median_cores": 0.1},
                     "B": {"passes": 6, "marked": 2, "median_cores": 0.1}}


def test_an_arm_gives_the_rooms_sizes_as_run_does() -> None:
    """`room_sizes=200,2048` as `run --room-sizes 200,2048` takes them (the error-rate
    campaign's room arm was refused: "Input should be a valid tuple"); a YAML list
    too; a size out of range is still refused, naming the arm."""
    base = load_topology(TWO_SITES)
    for given in ("200,2048", "[200, 2048]"):
        arm = arm_topology(base, [f"room_sizes={given}"], "--a")
        assert arm.settings.of(RoomSettings).sizes == (200, 2048)
    with pytest.raises(UserError, match="room replies are 1 to") as raised:
        arm_topology(base, ["room_sizes=200,0"], "--a")
    assert "--a room_sizes=200,0" in str(raised.value)
