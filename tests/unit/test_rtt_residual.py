"""tests/rtt_residual.py, docs/cost.md's look at the two-router path's RTT: its reading
of the helper's output (the pings themselves need an engine: `python -m
tests.rtt_residual OUT`)."""

from tests.rtt_residual import mean_rtts, report


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
