"""The bare namespaces' two-site shape: its helper's output read (recorded on this
project's machine: N = 20, 50, 200, a 3 s stream and 100 pings per variant)."""

from __future__ import annotations

from pathlib import Path

from vnetbench.measure.bare import BARE_SHAPE, bare_argv, parse_bare

DATA = Path(__file__).resolve().parents[2] / "data" / "bare"


def test_every_size_has_its_bring_up_teardown_and_links_gone() -> None:
    shape = parse_bare((DATA / "bare-shape-20-50-200.txt").read_text())
    assert set(shape.up_s) == set(shape.down_s) == set(shape.gone_s) == {20, 50, 200}
    assert shape.up_s[200] == 3.9161
    # the links are gone after the deletions returned, both timed from the same start
    assert all(shape.gone_s[n] >= shape.down_s[n] > 0 for n in shape.down_s)


def test_the_path_is_read_with_the_bridges_netfilter_off_and_on() -> None:
    shape = parse_bare((DATA / "bare-shape-20-50-200.txt").read_text())
    assert set(shape.paths) == {"netfilter-off", "netfilter-on"}
    assert shape.paths["netfilter-off"].rtt_mean_ms == 0.038
    assert shape.paths["netfilter-on"].rtt_mean_ms == 0.046
    assert all(path.tcp_mbit and path.tcp_mbit > 0 for path in shape.paths.values())


def test_a_tool_that_said_nothing_readable_is_none() -> None:
    text = ("bare-shape up 2 0.05\n--- ping netfilter-off ---\nconnect: Network is "
            "unreachable\n--- end ---\n--- iperf3 netfilter-off ---\n{}\n--- end ---\n")
    shape = parse_bare(text)
    assert shape.up_s == {2: 0.05}
    assert shape.paths["netfilter-off"].rtt_mean_ms is None
    assert shape.paths["netfilter-off"].tcp_mbit is None


def test_the_argv_passes_seconds_pings_and_the_sizes() -> None:
    argv = bare_argv([20, 200], 2.0, 100)
    assert argv[:3] == ["bash", "-c", BARE_SHAPE]
    assert argv[3:] == ["bare-shape", "2", "100", "20", "200"]
    # the host's own setting is never written: only the helper's own proc
    assert "/proc/sys/net/bridge" not in BARE_SHAPE.replace("/tmp/proc/sys", "")
