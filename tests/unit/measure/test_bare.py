"""The bare namespaces' two-site shape: its helper's output read (recorded on this
project's machine: N = 20, 50, 200, a 3 s stream and 100 pings per variant)."""

from __future__ import annotations

from pathlib import Path

from vnetbench.measure.bare import (
    BARE_PATHS_UP,
    BARE_SHAPE,
    bare_argv,
    bare_paths_script,
    engine_rules,
    parse_bare,
    parse_rounds,
    rules_commands,
)

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


# -- the bare path with the engine's rules, beside vnetbench's (calibrate's rounds) --

TESTS_DATA = Path(__file__).parents[2] / "data"
# a real iptables-save of a vnetbench router's namespace on Docker 28 (a shaped one:
# vnetbench's NFQUEUE and drop rules beside the engine's embedded-DNS NAT chains)
SAVED = (TESTS_DATA / "shaping" / "as-planned.txt").read_text().split("@@vnetbench-section@@")[1]


def test_only_the_engines_rules_are_copied_from_a_containers_save() -> None:
    """The nat table's DOCKER_ chains and jumps (the embedded DNS's), counters anew;
    vnetbench's own mangle NFQUEUE and raw drops stay behind (without their program
    they would stop B's traffic)."""
    rules = engine_rules(SAVED)
    lines = rules.splitlines()
    assert lines[0] == "*nat" and lines[-1] == "COMMIT" and lines.count("COMMIT") == 1
    assert ":DOCKER_OUTPUT - [0:0]" in lines and ":POSTROUTING ACCEPT [0:0]" in lines
    assert "-A OUTPUT -d 127.0.0.11/32 -j DOCKER_OUTPUT" in lines
    assert sum(line.startswith("-A DOCKER_") for line in lines) == 4
    assert "NFQUEUE" not in rules and "DROP" not in rules and "*mangle" not in rules
    assert "#" not in rules and "[400:14800]" not in rules


def test_the_rules_go_into_each_host_and_router_namespace_of_b() -> None:
    router = SAVED.replace("--dport 53 -j DNAT", "--dport 53 -j DNAT --router")
    commands = rules_commands(SAVED, router)
    assert [c.split(" <<")[0] for c in commands] == [
        f"ip netns exec {ns} iptables-restore" for ns in ("Bh1", "Bh2", "Br1", "Br2")]
    assert all(c.endswith("COMMIT\nRULES") for c in commands)
    assert "--router" not in commands[0] + commands[1]
    assert "--router" in commands[2] and "--router" in commands[3]
    script = bare_paths_script(commands)
    assert script.startswith(BARE_PATHS_UP) and script.count("<<'RULES'") == 4
    legacy = SAVED.replace("(nf_tables)", "(legacy)")
    assert rules_commands(legacy, legacy)[0].startswith("ip netns exec Bh1 "
                                                        "iptables-legacy-restore <<")


def test_without_the_engines_rules_there_is_no_path_b() -> None:
    plain = "*nat\n:OUTPUT ACCEPT [0:0]\nCOMMIT\n*filter\n-A INPUT -j DOCKER_X\nCOMMIT\n"
    assert engine_rules(plain) == "" and engine_rules("") == ""
    assert rules_commands(plain, SAVED) == [] and rules_commands(SAVED, "") == []


def test_each_rounds_paths_are_read_by_round_and_variant() -> None:
    ping = (TESTS_DATA / "ping-20.txt").read_text()
    iperf = (TESTS_DATA / "iperf3-tcp-2s.json").read_text()
    text = "".join(f"--- ping {v} round {n} ---\n{ping}--- end ---\n"
                   f"--- iperf3 {v} round {n} ---\n{iperf if v != 'off' else 'refused'}\n"
                   "--- end ---\n" for n in (1, 2) for v in ("vnetbench", "rules", "off"))
    rounds = parse_rounds(text)
    assert set(rounds) == {1, 2} and set(rounds[2]) == {"vnetbench", "rules", "off"}
    assert rounds[1]["rules"].rtt_mean_ms == 0.040
    assert (rounds[1]["vnetbench"].tcp_mbit or 0) > 0 and rounds[1]["off"].tcp_mbit is None
