"""netperf's omni output read, its client's arguments and retries, instances combined.
Recorded output (tests/data/netperf-*.txt): netperf 2.7.1 in the tools image, 2 s
tests between two tools containers on a Docker network."""

from __future__ import annotations

from pathlib import Path

import pytest

from vnetbench.measure import netperf
from vnetbench.measure.netperf import (
    NetperfError,
    NetperfResult,
    Netserver,
    client_argv,
    combined,
    parse_netperf,
)
from vnetbench.measure.probe import ProbeOutput


def read(data_dir: Path, name: str) -> str:
    return (data_dir / name).read_text()


def test_tcp_rr_and_tcp_crr_figures_are_read_by_name(data_dir: Path) -> None:
    assert parse_netperf(read(data_dir, "netperf-tcp-rr.txt")) == NetperfResult(
        transactions_per_s=120614.769, p50_us=8, p90_us=9, p99_us=9, max_us=4471,
        mean_us=8.25)
    crr = parse_netperf(read(data_dir, "netperf-tcp-crr.txt"))
    assert (crr.transactions_per_s, crr.p99_us, crr.mean_us) == (24926.938, 78, 40.07)


@pytest.mark.parametrize(("name", "said"), [
    # no netserver at the port: netperf's own sentence is the error
    ("netperf-refused.txt", "could not establish the control connection"),
    # the control connection cut short: only the banner, no figures
    ("netperf-partial-response.txt", "TCP REQUEST/RESPONSE TEST"),
])
def test_output_without_figures_is_an_error_with_its_last_lines(
        data_dir: Path, name: str, said: str) -> None:
    with pytest.raises(NetperfError, match="netperf reported no figures: ") as error:
        parse_netperf(read(data_dir, name))
    assert said in str(error.value)


def test_a_figure_missing_is_named(data_dir: Path) -> None:
    # edited: the recorded TCP_RR less its P99_LATENCY line
    text = "\n".join(line for line in read(data_dir, "netperf-tcp-rr.txt").splitlines()
                     if not line.startswith("P99"))
    with pytest.raises(NetperfError, match="reported no P99_LATENCY:"):
        parse_netperf(text)


def test_the_client_asks_for_the_selectors_as_key_value() -> None:
    assert client_argv("10.0.2.2", "TCP_CRR", 3.0) == [
        "netperf", "-H", "10.0.2.2", "-p", "12865", "-t", "TCP_CRR", "-l", "3", "--", "-k",
        "TRANSACTION_RATE,P50_LATENCY,P90_LATENCY,P99_LATENCY,MAX_LATENCY,MEAN_LATENCY"]


def test_a_client_retries_while_the_netserver_does_not_listen_yet(
        data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """First refused (the netserver just started), then the test: its output kept."""
    answers = [ProbeOutput(255, "", read(data_dir, "netperf-refused.txt")),
               ProbeOutput(0, read(data_dir, "netperf-tcp-rr.txt"), "")]
    bounds: list[float] = []

    def probe(run: object, target: str, argv: list[str], timeout: float) -> ProbeOutput:
        bounds.append(timeout)
        return answers.pop(0)

    monkeypatch.setattr(netperf, "run_probe", probe)
    monkeypatch.setattr(netperf.time, "sleep", lambda _: None)
    run = Netserver(object(), "10.0.2.2").run("agent1-c", "TCP_RR", 3, tmp_path / "rr.txt")  # type: ignore[arg-type]
    assert run.result is not None and run.result.transactions_per_s == 120614.769
    assert bounds == [18, 18]  # the test's 3 s and the grace, each attempt
    assert (tmp_path / "rr.txt").read_text() == read(data_dir, "netperf-tcp-rr.txt")


def test_instances_at_once_sum_their_rates_and_keep_the_worst_percentiles(
        data_dir: Path) -> None:
    rr = parse_netperf(read(data_dir, "netperf-tcp-rr.txt"))
    crr = parse_netperf(read(data_dir, "netperf-tcp-crr.txt"))
    both = combined([rr, crr])
    assert both.transactions_per_s == pytest.approx(120614.769 + 24926.938)
    assert (both.p50_us, both.p99_us, both.max_us) == (39, 78, 4471)
    # the mean of every transaction: each instance's weighted by how many it made
    assert both.mean_us == pytest.approx((8.25 * 120614.769 + 40.07 * 24926.938)
                                         / (120614.769 + 24926.938))


def test_a_client_stopped_at_its_bound_says_so(monkeypatch: pytest.MonkeyPatch,
                                               tmp_path: Path) -> None:
    """A path that drops the control connection's SYNs: netperf prints nothing until
    timeout(1) stops it (exit 124, as the dead-path integration test saw)."""
    monkeypatch.setattr(netperf, "run_probe", lambda *_: ProbeOutput(124, "", ""))
    run = Netserver(object(), "10.0.2.2").run("c", "TCP_RR", 2, tmp_path / "rr.txt")  # type: ignore[arg-type]
    assert run.error == ("netperf had not finished after 17 s and was stopped (netperf "
                         "reported no figures: no output)")
