"""Link profiles to commands (golden, both kernel paths) and --set parsing."""

from __future__ import annotations

import pytest

from vnetbench.errors import UserError
from vnetbench.model.topology import LinkProfile, parse_topology
from vnetbench.shaping.assign import parse_assignment, with_link_setting
from vnetbench.shaping.plan import DelayLine, plan_interface

WITHOUT_NETEM = {"tbf", "htb", "ifb", "ingress", "nfqueue", "statistic"}
WITH_NETEM = WITHOUT_NETEM | {"netem"}
PROFILE = LinkProfile.model_validate({"rate": "100mbit", "delay": "10ms", "jitter": "2ms",
                                      "loss": "1%"})


def test_no_netem_path_rate_on_egress_loss_and_delay_on_the_receiving_side() -> None:
    plan = plan_interface(PROFILE, WITHOUT_NETEM, queue=1)
    assert [" ".join(c) for c in plan.commands] == [
        "tc qdisc replace dev {dev} root handle 1: tbf rate 100000000bit burst 50000 "
        "latency 50ms",
        "iptables -t raw -A PREROUTING -i {dev} -m statistic --mode random --probability "
        "0.010000 -j DROP",
        "iptables -t mangle -A PREROUTING -i {dev} -j NFQUEUE --queue-num 1",
    ]
    assert plan.delay_line == DelayLine(queue=1, delay_ms=10.0, jitter_ms=2.0, reorder=False)


def test_netem_path_with_a_queue_sized_for_rate_times_delay() -> None:
    # 2 x (10 Gbit/s x 12 ms) / 1514 bytes = 19816 packets
    plan = plan_interface(PROFILE.model_copy(update={"rate": 10_000_000_000}), WITH_NETEM)
    assert [" ".join(c) for c in plan.commands] == [
        "tc qdisc replace dev {dev} root handle 1: netem limit 19816 delay 10ms 2ms loss 1%",
        "tc qdisc replace dev {dev} parent 1:1 handle 10: tbf rate 10000000000bit "
        "burst 5000000 latency 50ms",
    ]
    assert plan.delay_line is None
    small = plan_interface(LinkProfile(delay="5ms"), WITH_NETEM)
    assert [" ".join(c) for c in small.commands] == [
        "tc qdisc replace dev {dev} root handle 1: netem limit 1000 delay 5ms"]


def test_small_rates_keep_a_minimum_burst_and_offloads_can_be_turned_off() -> None:
    plan = plan_interface(LinkProfile(rate="10mbit", offloads=False), WITHOUT_NETEM)
    assert plan.commands[0] == ["ethtool", "-K", "{dev}", "tso", "off", "gso", "off",
                                "gro", "off"]
    assert "16384" in plan.commands[1]
    assert plan_interface(LinkProfile(), WITHOUT_NETEM).commands == []


def test_a_missing_mechanism_fails_before_anything_starts_naming_it() -> None:
    with pytest.raises(UserError, match=r"lacks nfqueue.*Still possible: statistic, tbf"):
        plan_interface(LinkProfile(delay="10ms"), {"tbf", "statistic"})


def test_set_parses_lists_with_a_shared_unit_and_checks_the_target() -> None:
    loss = parse_assignment("backbone.loss=0,0.5,1,2,5%")
    assert (loss.segment, loss.key, loss.values) == ("backbone", "loss",
                                                     ["0%", "0.5%", "1%", "2%", "5%"])
    assert parse_assignment("site.delay=0,5,20,50ms").values == ["0ms", "5ms", "20ms", "50ms"]
    assert parse_assignment("agent:agent1.rate=10mbit").segment == "agent:agent1"
    for bad in ("backbone.speed=1", "core.loss=1%", "backbone.loss"):
        with pytest.raises(UserError, match=r"SEGMENT\.KEY=VALUE"):
            parse_assignment(bad)


def test_a_setting_is_validated_like_the_topology_file() -> None:
    topology = parse_topology({"name": "t", "switches": 2, "agents": 2}, "t")
    shaped = with_link_setting(topology, parse_assignment("backbone.delay=20ms"), "20ms")
    assert shaped.links.backbone.delay == 20.0
    agent = with_link_setting(topology, parse_assignment("agent:agent2.loss=5%"), "5%")
    assert agent.agents[1].link is not None and agent.agents[1].link.loss == 5.0
    with pytest.raises(UserError, match=r"backbone\.loss=150%"):
        with_link_setting(topology, parse_assignment("backbone.loss=150%"), "150%")


def test_stream_options_follow_the_settings() -> None:
    from vnetbench.scenarios.throughput import stream_options

    plain = parse_topology({"name": "t", "switches": 2, "agents": 2}, "t")
    assert stream_options(plain) == []
    varied = parse_topology({"name": "t", "switches": 2, "agents": 2,
                             "settings": {"streams": 5, "reverse": True, "udp_mbit": 200}}, "t")
    assert stream_options(varied) == ["-P", "5", "-R", "-u", "-b", "200M"]


def test_cpu_percent_per_role() -> None:
    from vnetbench.measure.cpu import cpu_percent

    assert cpu_percent({"agent": 1.0, "switch": 2.0}, {"agent": 1.5, "switch": 3.0, "probe": 0.2},
                       seconds=2.0) == {"agent": 25.0, "switch": 50.0, "probe": 10.0}
