"""research/rtt_residual.py, the testbed-cost study's look at the two-router path's RTT: its reading
of the helper's output (the pings themselves need an engine: `python -m
research.rtt_residual OUT`)."""

import json
from pathlib import Path

from research.rtt_residual import mean_rtts, report, tcp_rates


def helper_output(rounds: dict[int, dict[str, list[float]]]) -> str:
    """The helper's sections, as ping prints them (a line per reply)."""
    text = ["=== the agent's rules (iptables) ===", "*nat", "COMMIT"]
    for number, paths in rounds.items():
        for path, times in paths.items():
            text.append(f"--- ping {path} round {number} ---")
            text += [f"64 bytes from 198.18.2.2: icmp_seq={n} ttl=62 time={t:.3f} ms"
                     for n, t in enumerate(times, 1)]
            text += ["", "rtt min/avg/max/mdev = 0.1/0.1/0.1/0.0 ms", "--- end ---"]
    return "\n".join(text) + "\n"


def test_each_round_s_mean_per_path() -> None:
    text = helper_output({1: {"A": [0.1, 0.3], "B": [0.2, 0.2], "T": [0.25, 0.25]},
                          2: {"T": [0.5], "A": [0.4], "B": [0.45]}})
    assert mean_rtts(text) == {1: {"A": 0.2, "B": 0.2, "T": 0.25},
                               2: {"T": 0.5, "A": 0.4, "B": 0.45}}


def test_b_a_tenth_slower_in_every_round_is_read_so() -> None:
    """B 10 % above A and T equal to B in all 8 rounds: B/A 1.100 at the smallest p 8
    pairs give (2/256), T/B 1.000 with no pair to test (p 1)."""
    rounds = {r: {"A": [0.1 + 0.01 * r], "B": [1.1 * (0.1 + 0.01 * r)],
                  "T": [1.1 * (0.1 + 0.01 * r)]} for r in range(1, 9)}
    said = report(helper_output(rounds))
    assert "B/A: 1.100 [1.100, 1.100], p 0.0078, B above A in 8 of 8 rounds" in said
    assert "T/B: 1.000" in said and "T above B in 0 of 8 rounds" in said
    assert said.count("\n| ") == 8  # a line per round below the header


DATA = Path(__file__).resolve().parents[1] / "tests" / "data"  # recorded iperf3 output


def with_tcp(text: str, rounds: dict[int, dict[str, float]]) -> str:
    """The helper's TCP sections: a real iperf3 report (tests/data/iperf3-tcp-2s.json)
    with its receiver's rate set per path and round; a negative rate: a failed stream
    (iperf3's real refusal)."""
    report = json.loads((DATA / "iperf3-tcp-2s.json").read_text())
    refused = (DATA / "iperf3-refused.json").read_text()
    sections = []
    for number, paths in rounds.items():
        for path, mbit in paths.items():
            report["end"]["sum_received"]["bits_per_second"] = mbit * 1e6
            body = json.dumps(report, indent=1) if mbit >= 0 else refused.strip()
            sections += [f"--- tcp {path} round {number} ---", body, "--- end ---"]
    return text + "\n".join(sections) + "\n"


def test_each_round_s_tcp_rate_per_path_and_a_failed_stream_left_out() -> None:
    text = with_tcp("", {1: {"A": 900.0, "B": 800.0, "T": 780.0},
                         2: {"T": 700.0, "A": -1, "B": 810.0}})
    assert tcp_rates(text) == {1: {"A": 900.0, "B": 800.0, "T": 780.0},
                               2: {"T": 700.0, "B": 810.0}}


def test_tcp_ratios_over_the_rounds_that_have_both_paths() -> None:
    """T 0.8 of A in rounds 1-6 and A failed in round 7: T/A over 6 rounds (p 2/64),
    T/B over all 7; the failed stream's cell reads so in the table."""
    pings = helper_output({r: {"A": [0.1], "B": [0.1], "T": [0.1]} for r in range(1, 8)})
    rates = {r: {"A": 1000.0, "B": 900.0, "T": 800.0} for r in range(1, 7)}
    rates[7] = {"A": -1, "B": 900.0, "T": 800.0}
    said = report(with_tcp(pings, rates))
    assert "TCP T/A: 0.800 [0.800, 0.800], p 0.0312, T above A in 0 of 6 rounds" in said
    assert "TCP T/B: 0.889" in said and "in 0 of 7 rounds" in said
    assert "| 7 | failed | 900 | 800 |" in said


def test_without_tcp_sections_only_the_rtt_is_reported() -> None:
    said = report(helper_output({1: {"A": [0.1], "B": [0.1], "T": [0.1]}}))
    assert "RTT B/A: 1.000" in said and "TCP" not in said and "Mbit/s" not in said


def test_the_two_ways_of_measuring_vnetbench_s_path_have_their_own_table_and_ratio() -> None:
    """P (probes) 0.9 of N (a helper entering the namespaces) in 6 rounds: P/N 0.900
    at p 2/64, in a table of its own beside the three paths'."""
    pings = helper_output({r: {"A": [0.1], "B": [0.1], "T": [0.1]} for r in range(1, 7)})
    rates = {r: {"A": 1000.0, "B": 1000.0, "T": 1000.0, "N": 1000.0, "P": 900.0}
             for r in range(1, 7)}
    said = report(with_tcp(pings, rates))
    assert "TCP P/N: 0.900 [0.900, 0.900], p 0.0312, P above N in 0 of 6 rounds" in said
    assert "| 3 | 1000 | 900 |" in said and "TCP T/A: 1.000" in said
