import functools
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import typer.main
import typer.testing

# typer's CliRunner builds the click command from the app's signatures on every
# invoke: 64 ms here, 87 % of a refused invocation's time (cProfile of `validate` and
# `run --passes x`). No test changes an app's commands after its first invoke, so
# each app is built once per session (typer.testing calls it by this private name).
typer.testing._get_command = functools.cache(typer.main.get_command)  # type: ignore[attr-defined]

DATA = Path(__file__).parent / "data"
SHARED = Path(__file__).resolve().parents[2] / "shared"


@pytest.fixture
def data_dir() -> Path:
    return DATA


@pytest.fixture
def data_copy(tmp_path: Path) -> Callable[[str], Path]:
    """A fresh copy of a recorded directory under tests/data, for a test to change."""
    def copy(name: str) -> Path:
        return Path(shutil.copytree(DATA / name, tmp_path / name))
    return copy


RUN_ID = "two-sites-20261129-194033-84a4"  # results-quick's one cell


@pytest.fixture
def results_with_raw(data_copy: Callable[[str], Path]) -> Path:
    """results-quick with its run directory beside it, as a matrix keeps it: each
    pass's raw ping output (a recorded ping, tests/data/ping-20.txt; results-quick
    was checked in without its run directories) and its iperf3 JSON."""
    directory = data_copy("results-quick")
    raw = directory / "runs" / RUN_ID / "throughput" / "raw"
    raw.mkdir(parents=True)
    for pass_no in (1, 2, 3):
        shutil.copy(DATA / "ping-20.txt", raw / f"ping-pass{pass_no}.txt")
        shutil.copy(DATA / "iperf3-tcp-2s.json", raw / f"iperf3-pass{pass_no}.json")
    return directory


def history_build(root: Path, name: str, day: str, tcp_factor: float) -> Path:
    """A copy of results-quick as if measured on `day`, its TCP rate times tcp_factor."""
    import json

    import pandas as pd

    directory = Path(shutil.copytree(DATA / "results-quick", root / name))
    frame = pd.read_parquet(directory / "results.parquet")
    frame.loc[frame["metric"] == "tcp_mbit", "value"] *= tcp_factor
    frame.to_parquet(directory / "results.parquet", index=False)
    header = json.loads((directory / "run.json").read_text())
    header["started"] = f"{day}T10:00:00+00:00"
    (directory / "run.json").write_text(json.dumps(header))
    return directory


@pytest.fixture
def history_root(tmp_path: Path) -> Path:
    """Three results directories of three days: the TCP rate falls 30 % on the second
    (beyond the recorded A/A's ±6.9 % floor) and rises 3 % on the third (within it)."""
    root = tmp_path / "results"
    for name, day, factor in (("build1", "2026-11-29", 1.0), ("build2", "2026-11-30", 0.7),
                              ("build3", "2026-12-01", 0.721)):
        history_build(root, name, day, factor)
    return root


# results-quick's baseline grown into a small bench: per overlay, the factor on its
# TCP rate and on its round trips (the order of what this machine's bench measured)
BENCH_OVERLAYS = {"wireguard": (0.55, 1.6), "vnet": (0.08, 3.0), "openvpn": (0.3, 2.2)}


def grow_into_bench(directory: Path) -> Path:
    """results-quick as a bench of several overlays and scenarios: each overlay of
    BENCH_OVERLAYS with the baseline's three passes scaled; tinc's throughput a dead
    path; a failover of one pass per overlay (outage, whether the TCP connection
    survived: vnet's did not) and a join of 20 machines of one pass (not on the
    baseline, which has no joins)."""
    import json

    import pandas as pd

    from vnetbench.analysis.results import load_results
    from vnetbench.core.outcome import State

    quick = load_results(directory)
    frames = [quick]
    for overlay, (tcp, rtt) in BENCH_OVERLAYS.items():
        scaled = quick.assign(overlay=overlay)
        scaled.loc[scaled["metric"] == "tcp_mbit", "value"] *= tcp
        scaled.loc[scaled["metric"].str.startswith("rtt_"), "value"] *= rtt
        frames.append(scaled)
    dead = quick.assign(overlay="tinc", value=float("nan"), state=State.DEAD.value,
                        status="path dead: 0 of 50 pings answered")
    frames.append(dead[dead["metric"] == "tcp_mbit"])
    template = quick.iloc[0]
    one_pass = [("failover", overlay, "default", metric, value, unit)
                for overlay, outage, survived in (("baseline", 12.0, 1), ("wireguard", 140.0, 1),
                                                  ("vnet", 2300.0, 0), ("openvpn", 850.0, 1))
                for metric, value, unit in (("outage_ms_switch-restart", outage, "ms"),
                                            ("tcp_survived_switch-restart", survived, "bool"))]
    one_pass += [("join", overlay, "n20", "join_seconds", seconds, "s")
                 for overlay, seconds in (("wireguard", 0.41), ("vnet", 3.9), ("openvpn", 2.2))]
    frames.append(pd.DataFrame([template.to_dict() | {
        "scenario": scenario, "overlay": overlay, "variant": variant, "pass": 1,
        "metric": metric, "value": value, "unit": unit}
        for scenario, overlay, variant, metric, value, unit in one_pass]))
    pd.concat(frames, ignore_index=True).to_parquet(directory / "results.parquet", index=False)
    header = json.loads((directory / "run.json").read_text())
    header["overlays"] |= {name: {"version": "recorded", "data_path": "scaled"}
                           for name in [*BENCH_OVERLAYS, "tinc"]}
    (directory / "run.json").write_text(json.dumps(header))
    return directory


@pytest.fixture
def bench_results(data_copy: Callable[[str], Path]) -> Path:
    return grow_into_bench(data_copy("results-quick"))


# make bench's matrix (vnetbench/runs/matrix.py CELLS) by its lead figures: scenario,
# variants of the other overlays, vnet's variants, each lead metric and its unit
MATRIX_SHAPE = (
    ("join", ("n20", "n50"), ("n100", "n200", "n400", "n800"), (("join_seconds", "s"),)),
    ("config", ("default",), ("n300", "n5000"), (("config_seconds", "s"),)),
    ("flood", ("default",), ("default",), (("pings_answered", "count"),)),
    ("failover", ("default",), ("default",), tuple(
        (f"{metric}_{fault}", unit) for fault in ("switch-restart", "backbone-down",
                                                  "loss-burst")
        for metric, unit in (("outage_ms", "ms"), ("tcp_survived", "bool"))),),
    ("room", ("n20",), ("n20",), (("room_p99_ms", "ms"), ("room_goodput_mbit", "Mbit/s"))),
    ("transactions", ("default",), ("default",), (("tcp_rr_tps", "transactions/s"),
                                                  ("tcp_crr_tps", "transactions/s"))),
    ("loaded_latency", ("default",), ("default",), (("one_way_added_p50_ms", "ms"),
                                                    ("both_ways_added_p50_ms", "ms"))),
)
NO_JOINS = ("baseline",)  # the path without an overlay has no joins nor config


def grow_into_make_bench(directory: Path) -> Path:
    """grow_into_bench's throughput with make bench's shape: nebula beside the other
    overlays, vnet's throughput as its three variants (tls, plain, tls-limits), and a
    pass of each lead figure of every other scenario of the matrix per overlay and
    variant (one pass: the matrix runs most of them once), values made up."""
    import pandas as pd

    from vnetbench.analysis.results import load_results

    grow_into_bench(directory)
    grown = load_results(directory)
    grown = grown[grown["scenario"] == "throughput"]
    quick = grown[grown["overlay"] == "baseline"]
    vnet = grown[grown["overlay"] == "vnet"]
    frames = [grown[grown["overlay"] != "vnet"], quick.assign(overlay="nebula")]
    frames += [vnet.assign(variant=variant) for variant in ("tls", "plain", "tls-limits")]
    template = quick.iloc[0].to_dict()
    overlays = ["baseline", "wireguard", "vnet", "openvpn", "tinc", "nebula"]
    rows = [template | {"scenario": scenario, "overlay": overlay, "variant": variant,
                        "pass": 1, "metric": metric, "unit": unit,
                        "value": float(1 if unit == "bool" else 10 + 7 * number)}
            for scenario, variants, vnet_variants, metrics in MATRIX_SHAPE
            for number, overlay in enumerate(overlays)
            if not (overlay in NO_JOINS and scenario in ("join", "config"))
            for variant in (vnet_variants if overlay == "vnet" else variants)
            for metric, unit in metrics]
    frames.append(pd.DataFrame(rows))
    pd.concat(frames, ignore_index=True).to_parquet(directory / "results.parquet", index=False)
    return directory


@pytest.fixture
def make_bench_results(data_copy: Callable[[str], Path]) -> Path:
    return grow_into_make_bench(data_copy("results-quick"))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The CLI fuzzer's count and time (tests/unit/test_cli_fuzz.py records them in
    each test's user_properties, which pytest-xdist brings back from its workers)."""
    cases, seconds, cpu = 0, 0.0, 0.0
    for reports in terminalreporter.stats.values():
        for report in reports:
            properties = dict(getattr(report, "user_properties", ()) or ())
            if getattr(report, "when", "") == "call" and "cli_fuzzer_cases" in properties:
                cases += properties["cli_fuzzer_cases"]
                seconds += properties["cli_fuzzer_seconds"]
                cpu += properties["cli_fuzzer_cpu"]
    if cases:
        terminalreporter.write_line(f"cli fuzzer: {cases} cases in {seconds:.1f} s "
                                    f"({cpu:.1f} s of CPU; the tests' times added)")
