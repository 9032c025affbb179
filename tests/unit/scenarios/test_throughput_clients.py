"""Several iperf3 clients started at one instant: their begins kept, a pass whose
clients did not overlap said to be partial, the stamp kept out of the raw report."""

from __future__ import annotations

from pathlib import Path

import pytest

from vnetbench.measure import iperf
from vnetbench.measure.iperf import IperfError, IperfServer, client_argv, parse_iperf_udp
from vnetbench.measure.probe import Began, ProbeOutput, parsed
from vnetbench.scenarios.throughput import ClientEnd, CpuFigures, Stream, apart, stream_metrics

NO_CPU = CpuFigures({}, {}, {})


def udp_end(data_dir: Path, began_at: float | None, late_s: float = 0.0,
            ended: float = 10.0) -> ClientEnd:
    run = parsed((data_dir / "iperf3-udp-300m.json").read_text(), parse_iperf_udp, IperfError)
    began = Began(began_at, late_s) if began_at is not None else None
    return ClientEnd(run, began, ended)


def test_clients_that_began_together_ran_at_once(data_dir: Path) -> None:
    ends = [udp_end(data_dir, 100.000), udp_end(data_dir, 100.004, ended=10.2)]
    stream = Stream.of(ends, NO_CPU, None, None, seconds=2)
    assert stream.apart == "" and stream.udp is not None
    assert stream.start_spread_s == pytest.approx(0.004)
    metrics = stream_metrics(stream)
    assert metrics["clients_start_spread_s"] == (pytest.approx(0.004), "s")
    assert metrics["clients_end_spread_s"] == (pytest.approx(0.2), "s")


def test_a_client_whose_container_started_late_did_not_run_at_once(data_dir: Path) -> None:
    """Beyond a tenth of the stream apart (here 0.9 s of 2 s), the senders' overlap is
    not the stream's: said, with how late the late one was."""
    ends = [udp_end(data_dir, 100.0), udp_end(data_dir, 100.9, late_s=0.9)]
    said = apart(ends, 2)
    assert said.startswith("the clients did not run at once: they began 0.90 s apart")
    assert "0.90 s after the shared instant" in said
    assert apart(ends, 10) == ""  # 0.9 s of a 10 s stream is within a tenth


def test_one_client_or_one_that_never_began_is_not_judged_apart(data_dir: Path) -> None:
    assert apart([udp_end(data_dir, 100.0)], 2) == ""
    assert apart([udp_end(data_dir, 100.0), udp_end(data_dir, None)], 2) == ""


def test_a_gated_client_strips_its_stamp_from_the_report(
        data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    report = (data_dir / "iperf3-udp-300m.json").read_text()
    calls: list[tuple[list[str], float]] = []

    def probe(run: object, target: str, argv: list[str], timeout_s: float) -> ProbeOutput:
        calls.append((argv, timeout_s))
        return ProbeOutput(0, "vnetbench-at began=1000.25 late_s=0.01\n" + report, "")

    monkeypatch.setattr(iperf, "run_probe", probe)
    monkeypatch.setattr(iperf.time, "time", lambda: 997.0)
    raw = tmp_path / "iperf3-pass1-client2.json"
    output, began = IperfServer("run1", "10.0.1.2", 5202).client_output_at(
        "client-c", 2, ["-u"], raw, 1000.24)
    assert began == Began(1000.25, 0.01)
    assert output == report == raw.read_text()  # the raw report is iperf3's JSON alone
    argv, timeout_s = calls[0]
    assert argv == ["vnetbench-at", "1000.240000",
                    *client_argv("10.0.1.2", 2, ["-u"], 5202)]
    # bounded by the wait for the instant plus the test and its grace
    assert timeout_s == pytest.approx(3.24 + 2 + iperf.CLIENT_GRACE_SECONDS)


def test_a_lost_udp_opening_is_explained() -> None:
    """iperf3's own words for a UDP test whose opening datagram (or its answer) was
    lost say nothing of why; the error adds it."""
    report = '{"start": {}, "intervals": [], "end": {}, "error": "unable to read from ' \
             'stream socket: Resource temporarily unavailable"}'
    run = parsed(report, parse_iperf_udp, IperfError)
    assert run.error is not None
    assert run.error.startswith("unable to read from stream socket")
    assert "opens a UDP test with one datagram" in run.error
    other = parsed('{"error": "unable to connect to server"}', parse_iperf_udp, IperfError)
    assert other.error == "unable to connect to server"
