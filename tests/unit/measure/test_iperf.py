"""iperf3 runs: the client's arguments, retry while the server starts, raw kept, parsed.

The probe is replaced by captured output (tests/data), so no engine is needed.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from vnetbench.measure import iperf
from vnetbench.measure.iperf import IperfServer, client_argv, udp_options
from vnetbench.measure.probe import ProbeOutput, ToolRun, parsed, save_raw


def test_client_argv() -> None:
    assert client_argv("10.0.1.2", 10, []) == [
        "iperf3", "-c", "10.0.1.2", "-t", "10", "-J", "--connect-timeout", "5000"]
    assert client_argv("10.0.1.2", 2.5, ["-P", "4", "-R"])[-3:] == ["-P", "4", "-R"]
    assert client_argv("10.0.1.2", 2.5, [])[4] == "2.5"


def test_udp_options() -> None:
    assert udp_options(200) == ["-u", "-b", "200M"]
    assert udp_options(300.5, 1400) == ["-u", "-b", "300.5M", "-l", "1400"]


class FakeProbe:
    """run_probe answering with the given outputs in turn, recording its calls."""

    def __init__(self, *outputs: str) -> None:
        self.outputs = list(outputs)
        self.calls: list[tuple[str, str, list[str], float]] = []

    def __call__(self, run_id: str, target: str, argv: list[str],
                 timeout_seconds: float) -> ProbeOutput:
        self.calls.append((run_id, target, argv, timeout_seconds))
        return ProbeOutput(0, self.outputs.pop(0), "")


@pytest.fixture
def no_sleep(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(time, "sleep", lambda _: None)  # between connect attempts


def test_client_tries_again_while_the_server_is_not_listening(
        data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        no_sleep: None) -> None:
    refused = (data_dir / "iperf3-refused.json").read_text()
    report = (data_dir / "iperf3-tcp-2s.json").read_text()
    probe = FakeProbe(refused, refused, report)
    monkeypatch.setattr(iperf, "run_probe", probe)
    raw = tmp_path / "raw" / "iperf3-pass1.json"
    run = IperfServer("run1", "10.0.1.2").run("client-c", 2, ["-R"], raw)
    assert run.error is None and run.result is not None
    assert run.result.receiver_mbit == pytest.approx(19843.725, rel=1e-6)
    assert raw.read_text() == report == run.raw
    assert len(probe.calls) == 3
    assert probe.calls[0] == ("run1", "client-c", client_argv("10.0.1.2", 2, ["-R"]), 32)


def test_a_server_that_never_listens_is_the_error_text(
        data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        no_sleep: None) -> None:
    refused = (data_dir / "iperf3-refused.json").read_text()
    probe = FakeProbe(*[refused] * iperf.CONNECT_ATTEMPTS)
    monkeypatch.setattr(iperf, "run_probe", probe)
    raw = tmp_path / "iperf3-pass2.json"
    run = IperfServer("run1", "10.0.1.2").run("client-c", 2, [], raw)
    assert run.result is None
    assert run.error is not None and "Connection refused" in run.error
    assert raw.read_text() == refused
    assert len(probe.calls) == iperf.CONNECT_ATTEMPTS


def test_udp_run_is_counted_by_the_receiver(data_dir: Path, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    report = (data_dir / "iperf3-udp-300m.json").read_text()
    probe = FakeProbe(report)
    monkeypatch.setattr(iperf, "run_probe", probe)
    run = IperfServer("run1", "10.0.1.1").run_udp("sender-c", 5, 300, 1400,
                                                  tmp_path / "flood-pass1.json")
    assert run.result is not None and run.result.packets_sent > 0
    assert probe.calls[0][2] == client_argv("10.0.1.1", 5, udp_options(300, 1400))
    assert (tmp_path / "flood-pass1.json").read_text() == report


def test_parsed_keeps_raw_and_turns_only_the_parsers_error_into_text() -> None:
    def parse(text: str) -> int:
        if not text.isdigit():
            raise ValueError(f"not a number: {text}")
        return int(text)

    assert parsed("42", parse, ValueError) == ToolRun("42", 42, None)
    assert parsed("x", parse, ValueError) == ToolRun("x", None, "not a number: x")
    with pytest.raises(ValueError):
        parsed("x", parse, KeyError)


def test_save_raw_creates_the_directory(tmp_path: Path) -> None:
    save_raw(tmp_path / "a" / "b" / "ping-pass1.txt", "text")
    assert (tmp_path / "a" / "b" / "ping-pass1.txt").read_text() == "text"


def test_a_stream_that_stalls_while_pings_pass_is_a_failure(data_dir: Path) -> None:
    """Recorded on a swarm whose WireGuard tunnel MTU did not fit the overlay network:
    pings (small) answered, the TCP stream (full-size segments) delivered nothing in
    5 s (iperf3 ended normally). Marked ok, it read as a measured 0 Mbit/s."""
    from vnetbench.core.outcome import Outcome, State
    from vnetbench.measure.iperf import parse_iperf_json
    from vnetbench.measure.ping import parse_ping
    from vnetbench.model.topology import parse_topology
    from vnetbench.scenarios.pair import path_status, stall_floor_mbit

    stalled = parse_iperf_json((data_dir / "iperf3-stalled-mtu.json").read_text())
    ping = parse_ping((data_dir / "ping-over-stalled-mtu.txt").read_text())
    outcome = path_status(stalled, None, ping, None)
    state, status = outcome.state, outcome.status
    assert state is State.FAILED
    assert "stalled" in status and f"{ping.received} of {ping.transmitted}" in status
    healthy = parse_iperf_json((data_dir / "iperf3-tcp-2s.json").read_text())
    assert path_status(healthy, None, ping, None) == Outcome()
    slow = parse_topology({"name": "t", "switches": 2, "agents": 2,
                           "links": {"backbone": {"rate": "100kbit"}}}, "t.yml")
    assert stall_floor_mbit(slow) == pytest.approx(0.01)  # a tenth of a slow link's rate


@pytest.mark.parametrize(("bound", "argument"), [(0.4, "1"), (1.0, "1"), (10.2, "11"),
                                                 (130.0, "130")])
def test_a_probe_bound_is_never_zero(bound: float, argument: str) -> None:
    """timeout(1) reads 0 as no bound at all: a bound of 0.4 s (transfer_timeout_s may
    be any positive number) was formatted as '0'."""
    from vnetbench.measure.probe import timeout_argument

    assert timeout_argument(bound) == argument
