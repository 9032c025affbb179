"""User errors: one paragraph, exit status 2, no traceback."""

import random
from pathlib import Path

import pytest
import typer
import yaml
from typer.testing import CliRunner

from vnetbench.cli import app

runner = CliRunner()


def test_validate_says_ok_to_a_big_plan_that_holds(tmp_path: Path) -> None:
    """600 agents on two switches: each site's tunnel subnet is a /23 (tests/unit/
    test_addressing.py checks the addresses); validate asks the overlay for them."""
    (tmp_path / "big.yml").write_text("name: big\nswitches: 2\nagents: 600\n"
                                      "overlay: wireguard\n")
    result = runner.invoke(app, ["validate", str(tmp_path / "big.yml")])
    assert result.exit_code == 0 and "600 agent(s)" in result.output, result.output


def test_validate_good_file() -> None:
    result = runner.invoke(app, ["validate", "topologies/two-sites.yml"])
    assert result.exit_code == 0
    assert "ok (baseline, 2 switch(es), 2 agent(s))" in result.output


def test_validate_bad_file_exit_2_without_traceback(tmp_path: Path) -> None:
    path = tmp_path / "bad.yml"
    path.write_text("name: t\nswitches: 1\nagents: [{name: a, switch: nowhere}]\n")
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == 2
    assert "unknown switch 'nowhere'" in result.output
    assert "Traceback" not in result.output


def test_run_unknown_scenario_and_overlay(tmp_path: Path) -> None:
    result = runner.invoke(app, ["run", "warp-speed", "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert "no scenario called 'warp-speed'" in result.output
    result = runner.invoke(app, ["run", "throughput", "--overlay", "carrier-pigeon"])
    assert result.exit_code == 2
    assert "no overlay called 'carrier-pigeon'" in result.output
    assert not list(tmp_path.iterdir())  # nothing started, nothing written


def test_negative_seconds_rejected() -> None:
    result = runner.invoke(app, ["run", "throughput", "--seconds", "-3"])
    assert result.exit_code == 2
    assert "settings.seconds" in result.output


def invoke(args: list[str], **env: str) -> tuple[int, str]:
    result = runner.invoke(app, args, env={"DOCKER_HOST": "unix:///nonexistent", **env})
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"{args}: {result.exception!r}")
    assert "Traceback" not in result.output
    return result.exit_code, " ".join(result.output.split())


GOOD = "name: t\nswitches: 2\nagents: 2\n"


@pytest.mark.parametrize("overlays", ["wireguard", "baseline,wireguard"])
def test_a_room_that_cannot_run_is_refused_before_anything_starts(tmp_path: Path,
                                                                  overlays: str) -> None:
    """run join --machines 5000 --overlay wireguard printed pydantic's text after the
    run directory and address block were claimed (and a comparison, after the first
    overlay's run): now one paragraph, and no run directory."""
    (tmp_path / "t.yml").write_text(GOOD)
    code, output = invoke(["run", "throughput", "join", "--machines", "5000", "--overlay",
                           overlays, "-t", str(tmp_path / "t.yml"), "--out",
                           str(tmp_path / "out")])
    assert code == 2 and "The join scenario cannot run on topology 't' with wireguard" in output
    assert "errors.pydantic.dev" not in output
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


@pytest.mark.parametrize(("args", "env", "expected"), [
    (["run", "throughput", "--passes", "0"], {}, "--passes (settings.passes)"),
    (["run", "throughput", "--seconds", "-5"], {}, "--seconds (settings.seconds)"),
    (["validate", "{t}"], {"BENCH_SECONDS": "0"}, "BENCH_SECONDS (settings.seconds)"),
    (["validate", "{t}"], {"BENCH_SECONDS": "abc"}, "BENCH_SECONDS (settings.seconds)"),
    # iperf3 reads -t with atoi: 1.7 ran 1 s while the results said 1.7
    (["run", "throughput", "--seconds", "1.7"], {},
     "--seconds (settings.seconds): 1.7 is not a whole number of seconds: iperf3 reads -t"),
    (["validate", "{t}"], {"BENCH_SECONDS": "2.5"},
     "BENCH_SECONDS (settings.seconds): 2.5 is not a whole number of seconds"),
    (["sweep", "throughput", "--set", "backbone.delay=1ms", "-t", "{t}", "--seconds", "0.5"],
     {}, "--seconds (settings.seconds): 0.5 is not a whole number of seconds"),
    (["calibrate", "--seconds", "1.5", "--out", "{dir}"], {},
     "--seconds: 1.5 is not a whole number of seconds"),
    (["run", "throughput", "--out", "{file}"], {}, "it names a file, not a directory"),
    (["run", "throughput", "--out", "/proc/vnetbench"], {}, "cannot write results there"),
    (["validate", "{binary}"], {}, "cannot be read as a YAML text file"),
    (["validate", "{dir}"], {}, "is a directory; give the path of a topology file"),
    (["down", ""], {}, "needs the id of a run"),
    (["run", "throughput", "--pair", "agent1"], {}, "--pair 'agent1': it takes two agent"),
    (["run", "throughput", "--pair", "agent1,team-37"], {},
     "topology 't' has no agent named team-37. Give two different agents of the topology, "
     "e.g. --pair agent1,agent2."),
    (["run", "throughput", "--pair", "agent2,agent2"], {}, "FROM and TO are the same agent"),
])
def test_bad_input_names_its_source(tmp_path: Path, args: list[str], env: dict[str, str],
                                    expected: str) -> None:
    (tmp_path / "t.yml").write_text(GOOD)
    (tmp_path / "afile").write_text("")
    (tmp_path / "bin.yml").write_bytes(bytes(range(256)))
    places = {"{t}": str(tmp_path / "t.yml"), "{file}": str(tmp_path / "afile"),
              "{binary}": str(tmp_path / "bin.yml"), "{dir}": str(tmp_path)}
    args = [places.get(a, a) for a in args]
    if args[0] == "run":
        args += ["-t", str(tmp_path / "t.yml")]
    code, output = invoke(args, **env)
    assert code == 2 and expected in output, output


@pytest.mark.parametrize(("topology", "expected"), [
    ("links: {backbone: {rate: 100mbps}}", "'100mbps' is a byte rate"),
    ("links: {backbone: {delay: 10}}", "'10' has no unit"),
    ("links: {backbone: {jitter: 2ms}}", "jitter varies a delay, and there is none"),
    # each of these validated, and ran as something else than it said
    ("links: {backbone: {rate: 0mbit}}", "links.backbone.rate: a rate of 0 shapes nothing"),
    ("links: {site: {rate: 5kbit}}", "links.site.rate: 5kbit is below 10kbit"),
    ("links: {site: {rate: 200gbit}}", "links.site.rate: 200gbit is above 100gbit"),
    ("links: {backbone: {delay: 100000s}}",
     "links.backbone: delay 100000s + jitter 0ms is more than 1000ms each way"),
    ("links: {backbone: {delay: 600ms, jitter: 500ms}}",
     "delay 600ms + jitter 500ms is more than 1000ms each way"),
    ("links: {backbone: {delay: 2ms, jitter: 3ms}}", "jitter 3ms is more than delay 2ms"),
    ("links: {backbone: {rate: 1gbit, delay: 300ms}}",
     "24769 full-size packets in flight; the delay line"),
    ("links: {site: {rate: 10mbit, mtu: 65535}}",
     "mtu 65535 at rate 10mbit: the shaper's token bucket holds 16384 bytes"),
    ("links: {site: {mtu: 100}}", "links.site.mtu: an MTU of 100 bytes cannot be set"),
    ("settings: {ping_interval_ms: 2.5}",
     "settings.ping_interval_ms: 2.5 is not a whole number of milliseconds"),
    ("agents: ten", "'ten' is neither a number of agents"),
    ("name: Team Été", "'Team Été' is not a usable name"),
    ("switches: [s1, s1]", "s1 repeated"),
    ("agents: [{name: a, switch: switch1}, {name: a, switch: switch2}]",
     "agent names must be unique: a repeated"),
    ("agents: [{name: switch1, switch: switch2}, {name: b, switch: switch1}]",
     "switch1 is also a switch's name"),
    # a node named as a generated service replaced it in a gated or swarm render
    ("agents: [{name: fabric, switch: switch1}, {name: b, switch: switch2}]",
     "'fabric' is both the fabric helper vnetbench adds to every run and agent 'fabric'"),
    ("agents: [{name: router-switch1, switch: switch1}, {name: b, switch: switch2}]",
     "'router-switch1' is both the baseline service of switch 'switch1' and agent "
     "'router-switch1'"),
    ("overlay: wireguard\nagents: [{name: a, switch: switch1}, {name: hub-switch2, "
     "switch: switch2}]", "'hub-switch2' is both the wireguard service of switch"),
    ("overlay: vnet\nswitches: [conductor, s2]",
     "'conductor' is both vnet's own service 'conductor' and switch 'conductor'"),
    ("engine: swarm\nhosts: {switch1: node-a}\nagents: [{name: fabric-node-a, switch: "
     "switch1}, {name: b, switch: switch2}]",
     "'fabric-node-a' is both the fabric helper of swarm node 'node-a'"),
    ('name: "t\\n"', "'t\\n' is not a usable name"),
    ('agents: [{name: "a\\n  privileged: true", switch: switch1}]', "is not a usable name"),
    # unbounded, unchecked or ignored
    ("agents: 1000000000", "agents: 1000000000 agents are more than 2000: 2 switch(es) take "
     "at most 1000 agent containers each"),
    ("switches: 15\nagents: 1500000\nagent_pool: 100",
     "1500000 agents are more than 100000"),
    ("agents: [" + ", ".join(["{name: a, switch: switch1}"] * 2001) + "]",
     "agents: 2001 agents are more than 2000"),
    ("engine: swarm\nmanager: \"ssh://me@host\\n  privileged: true\"",
     "is not a Docker endpoint: give the manager as ssh://user@host"),
    ("engine: swarm\nmanager: http://host", "'http://host' is not a Docker endpoint"),
    ("engine: swarm\nhosts: {switch1: 'node a'}",
     "hosts: switch1: 'node a' is not a swarm node's name"),
    ("overlay_options: {wireguad: {mtu: 1400}}",
     "overlay_options.wireguad names no overlay, so its options would be ignored"),
    ("measure: {from: agent1, to: team-37}", "measure: no agent named team-37"),
    ("measure: {from: agent1, to: agent1}", "from and to are both agent1"),
    ("overlay: wireguard\noverlay_options: {wireguard: {mtu: big}}",
     "overlay_options.wireguard is not valid: mtu"),
    ("overlay: openvpn\noverlay_options: {openvpn: {privileged: true}}",
     "overlay_options.openvpn is not valid: privileged"),
    # 20000 agents need a /17, and site 1's (100.64.128.0/17) holds the hubs' links
    # 100.64.250.0/24: validate said ok
    ("overlay: tinc\nswitches: 1\nagents: 20000\nagent_pool: 100",
     "20000 agents on one switch do not fit the tunnels' addresses"),
    ("overlay: vnet\nswitches: 15\nagents: 70000\nagent_pool: 100",
     "virtual network 10.0.0.0/16 holds 64770 agents from 10.0.1.1"),
])
def test_bad_topology_values_are_named(tmp_path: Path, topology: str, expected: str) -> None:
    base = {"name": "t", "switches": "2", "agents": "2"}
    keys = {line.split(":")[0] for line in topology.splitlines()}
    text = "".join(f"{k}: {v}\n" for k, v in base.items() if k not in keys) + topology + "\n"
    (tmp_path / "t.yml").write_text(text)
    code, output = invoke(["validate", str(tmp_path / "t.yml")])
    assert code == 2 and expected in output, output


@pytest.mark.parametrize("chunk", range(3))  # 3 x 50 cases: the workers share them
def test_fuzzed_topologies_and_options_never_give_a_traceback(tmp_path: Path,
                                                              chunk: int) -> None:
    """Random bytes, random YAML made of topology words, random option values: every
    answer is 0 or a one-paragraph error with exit 2, never a traceback."""
    rng = random.Random(20261130 + chunk)
    words = ["name", "switches", "agents", "links", "site", "backbone", "rate", "delay",
             "jitter", "loss", "settings", "seconds", "passes", "overlay", "agent_pool",
             "overlay_options", "wireguard", "vnet", "images", "switch", "link", "-1", "0",
             "1e9", "100mbit", "10ms", "~", "[]", "{}", "é", "'", "\"", "*a", "&a", "!!python"]

    def value(depth: int) -> object:
        kind = rng.random()
        if depth > 2 or kind < 0.4:
            return rng.choice([*words, rng.randint(-5, 5000), rng.random(), None, True])
        if kind < 0.7:
            return [value(depth + 1) for _ in range(rng.randint(0, 3))]
        return {str(rng.choice(words)): value(depth + 1) for _ in range(rng.randint(0, 4))}

    path = tmp_path / "t.yml"
    for case in range(50):
        if case % 5 == 0:
            path.write_bytes(rng.randbytes(rng.randint(0, 200)))
        else:
            data = {"name": "t", "switches": 2, "agents": 2} if case % 2 else {}
            data |= {str(rng.choice(words)): value(0) for _ in range(rng.randint(1, 4))}
            path.write_text(yaml.safe_dump(data, allow_unicode=True))
        code, _ = invoke(["validate", str(path)])
        assert code in (0, 2)
        option = rng.choice(["--passes", "--seconds", "--streams", "--ping-size",
                             "--udp-mbit", "--overlay", "--machines"])
        code, _ = invoke(["run", "throughput", "-t", str(path), option,
                          rng.choice(["-1", "0", "nan", "1e400", "x", "", "3"]),
                          "--out", str(tmp_path / "out")])
        assert code == 2


def test_an_engine_that_stops_answering_is_one_paragraph() -> None:
    """With no engine, a failed engine call is said plainly (exit 3: the environment's,
    no traceback)."""
    from vnetbench.commands.common import guarded
    from vnetbench.engines import EngineError

    @guarded
    def measuring() -> None:
        raise EngineError("docker run failed", 1, "",
                          "Cannot connect to the Docker daemon at unix:///x")

    test_app = typer.Typer()
    test_app.command()(measuring)
    result = runner.invoke(test_app, [], env={"DOCKER_HOST": "unix:///nonexistent"})
    assert result.exit_code == 3
    assert "the Docker engine stopped answering (Cannot connect" in " ".join(
        result.output.split())


@pytest.mark.parametrize(("args", "expected"), [
    (["run"], "Name what to run"),
    (["run", "throughput", "--method", "vpncloud"], "--method vpncloud sets the measurement"),
    (["run", "--method", "iperf"], "no method called 'iperf'"),
    (["run", "throughput", "--short"], "--short is a reference method's short form"),
    (["run", "throughput", "--ping-sizes", "100,big"], "--ping-sizes '100,big' is not a list"),
    (["run", "throughput", "--tunnel-mtu", "100"], "settings.tunnel_mtu"),
    (["run", "transfer", "--transfer-bytes", "lots"], "is not an amount of data"),
])
def test_method_and_its_settings_refused_before_anything_starts(
        tmp_path: Path, args: list[str], expected: str) -> None:
    result = runner.invoke(app, [*args, "--out", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert expected in " ".join(result.output.split())
    assert "Traceback" not in result.output
    assert not list(tmp_path.iterdir())


def test_methods_lists_each_with_its_reference() -> None:
    result = runner.invoke(app, ["methods"])
    assert result.exit_code == 0
    for name, reference in (("vpncloud", "vpncloud-performance.txt"),
                            ("instageni", "instageni-openflow-iperf.txt")):
        assert name in result.output and reference in result.output


def test_render_into_a_file_or_an_unwritable_place_is_one_paragraph(tmp_path: Path) -> None:
    taken = tmp_path / "taken"
    taken.write_text("a file")
    for output, said in [(taken, "it names a file"), (Path("/proc/vnetbench"), "--output")]:
        code, text = invoke(["render", "topologies/two-sites.yml", "-o", str(output)])
        assert code == 2 and said in text and "cannot write" in text, text
