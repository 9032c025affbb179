"""The metric catalogue: every metric a scenario emits is declared, once."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from vnetbench.analysis.results import load_results
from vnetbench.core.metrics import Better, Catalogue, Metric
from vnetbench.declared import catalogue
from vnetbench.engines.stack import Restarted
from vnetbench.measure.iperf import UdpResult, combined_udp, parse_iperf_udp
from vnetbench.model.topology import SharedSettings
from vnetbench.overlays.base import AgentLimits, Reconfiguration
from vnetbench.scenarios.config import config_metrics
from vnetbench.scenarios.flood import flood_metrics
from vnetbench.scenarios.join import JoinOutcome, result_of
from vnetbench.scenarios.throughput import offered_short, ping_metrics, tcp_metrics


def emitted_names() -> set[str]:
    """What each scenario's metric builders emit, with and without results."""
    join = JoinOutcome(total=4, joined={"a": pd.Timestamp(100.2, unit="s")},
                       switches=Counter(switch1=1), released_first=100.0,
                       released_last=100.01, gate_waiting=0, reasons=Counter(), settle_s=0.1,
                       restarted=Restarted(stuck=(), revived=(), seconds=0.5))
    limits = AgentLimits(5000, 50e6, 1.0)
    names = set(tcp_metrics(None)) | set(ping_metrics(None))
    names |= set(flood_metrics(None, None, None, None)) | set(
        flood_metrics(None, None, limits, 3))
    names |= set(result_of(join, 30).metrics)
    names |= set(config_metrics(Reconfiguration(lines=1, bytes=2, seconds=0.1,
                                                confirmed=2, expected=2)))
    names |= {f"mem_{role}_{kind}_mib" for role in ("agent", "switch", "conductor")
              for kind in ("idle", "load", "peak")}
    return names | {"cpu_agent_percent", "cpu_switch_percent", "tunnel_rx_bytes", "skipped"}


def test_every_emitted_metric_is_declared(data_dir: Path) -> None:
    metrics = catalogue()
    recorded = set(load_results(data_dir / "results-quick")["metric"])
    undeclared = sorted(n for n in emitted_names() | recorded if metrics.find(n) is None)
    assert undeclared == []


def test_direction_headline_and_patterns() -> None:
    metrics = catalogue()
    assert metrics.better("tcp_mbit") is Better.HIGHER
    assert metrics.better("config_seconds") is Better.LOWER  # the name the scenario emits
    assert metrics.better("joined_on_switch2") is Better.NEITHER
    assert metrics.headline("cpu_switch_percent") == (
        "CPU of the switch containers during the stream (% of a core)")
    assert metrics.headline("tcp_bytes") is None
    assert metrics.order("tcp_mbit") < metrics.order("rtt_mean_ms")


def test_a_metric_declared_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="declared twice: x"):
        Catalogue([Metric("x", "s"), Metric("x", "ms")])


def test_a_udp_generator_held_below_its_declared_rate_is_named(data_dir: Path) -> None:
    """Recorded iperf3 senders on this machine: galaxy42's two 8972-byte senders offered
    their 1 Gbit/s each; InstaGENI's one sender of 1448-byte datagrams, asked for
    1 Gbit/s, sent 760 Mbit/s beside the stack it measured: its load was not declared."""
    def udp(name: str) -> UdpResult:
        return parse_iperf_udp((data_dir / name).read_text())

    pair = combined_udp([udp("iperf3-udp-9k-1g-client1.json"),
                         udp("iperf3-udp-9k-1g-client2.json")])
    assert offered_short(pair, SharedSettings(udp_mbit=1000, clients=2)) == ""
    # one of the two alone is half of what two were declared to offer
    alone = udp("iperf3-udp-9k-1g-client1.json")
    assert "offered 1000 of the 2000 Mbit/s declared (50%)" in offered_short(
        alone, SharedSettings(udp_mbit=1000, clients=2))
    held = udp("iperf3-udp-1g-sender-held.json")
    said = offered_short(held, SharedSettings(udp_mbit=1000))
    assert said.startswith("the UDP generator offered 760 of the 1000 Mbit/s declared (76%)")
    # the same sender against a declared rate it met: nothing to say; TCP: nothing either
    assert offered_short(held, SharedSettings(udp_mbit=800)) == ""
    assert offered_short(None, SharedSettings()) == ""
