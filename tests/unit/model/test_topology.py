import re
from pathlib import Path

import pytest

from vnetbench.errors import UserError
from vnetbench.model.topology import (
    MEASUREMENT_SETTINGS,
    load_topology,
    parse_topology,
    settings_from_environment,
)
from vnetbench.overlays import OVERLAY_NAMES

ROOT = Path(__file__).resolve().parents[3]


def test_examples_are_valid() -> None:
    for path in (ROOT / "topologies").glob("*.yml"):
        topology = load_topology(path, overrides={})
        assert topology.agents


def test_round_robin_placement() -> None:
    topology = parse_topology({"name": "t", "switches": 3, "agents": 7}, "t.yml")
    assert topology.switches == ["switch1", "switch2", "switch3"]
    assert [a.switch for a in topology.agents] == [
        "switch1", "switch2", "switch3", "switch1", "switch2", "switch3", "switch1"]
    assert len(topology.agents_on("switch1")) == 3


def test_explicit_agents_and_link_units() -> None:
    topology = parse_topology({
        "name": "t", "switches": ["a", "b"],
        "agents": [{"name": "x", "switch": "b"}],
        "links": {"backbone": {"rate": "100mbit", "delay": "10ms", "loss": "1%"}},
    }, "t.yml")
    assert topology.agent("x").switch == "b"
    assert topology.links.backbone.rate == 100_000_000
    assert topology.links.backbone.delay == 10.0
    assert topology.links.backbone.loss == 1.0
    assert topology.links.backbone.is_shaped
    assert not topology.links.site.is_shaped


def test_every_problem_reported_at_once_with_location() -> None:
    with pytest.raises(UserError) as caught:
        parse_topology({
            "name": "t", "overlay": "nope", "switches": ["a"],
            "agents": [{"name": "x", "switch": "a"}],
            "settings": {"seconds": -2, "passes": 0},
            "links": {"site": {"rate": "fast"}},
        }, "bad.yml", overlays=OVERLAY_NAMES)
    text = str(caught.value)
    assert "bad.yml" in text
    assert "overlay: unknown overlay 'nope'" in text
    assert "settings.seconds" in text
    assert "settings.passes" in text
    assert "links.site.rate" in text
    assert "(4 problem(s))" in text


def test_agent_on_unknown_switch() -> None:
    with pytest.raises(UserError, match=r"agents\.0\.switch: unknown switch 'c'"):
        parse_topology({"name": "t", "switches": ["a", "b"],
                        "agents": [{"name": "x", "switch": "c"}]}, "t.yml")


@pytest.mark.parametrize("agents", [0, []])
def test_zero_agents(agents: object) -> None:
    with pytest.raises(UserError, match="agents"):
        parse_topology({"name": "t", "switches": 1, "agents": agents}, "t.yml")


def test_unknown_key_is_an_error() -> None:
    with pytest.raises(UserError, match="swiches"):
        parse_topology({"name": "t", "swiches": 1, "switches": 1, "agents": 1}, "t.yml")


def test_malformed_yaml_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.yml"
    path.write_text("name: t\nswitches: [a, b\nagents: 2\n")
    with pytest.raises(UserError, match=r"not valid YAML at line \d+"):
        load_topology(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no topology file"):
        load_topology(tmp_path / "nope.yml")


def test_environment_overrides_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "t.yml"
    path.write_text("name: t\nswitches: 2\nagents: 2\nsettings: {seconds: 10}\n")
    monkeypatch.setenv("BENCH_SECONDS", "3")
    monkeypatch.setenv("BENCH_TLS", "off")
    topology = load_topology(path)
    assert topology.settings.seconds == 3
    assert topology.settings.tls is False


def test_bad_environment_value_names_the_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    assert settings_from_environment({"BENCH_SECONDS": "-1"}) == {"seconds": "-1"}
    with pytest.raises(UserError, match=r"settings\.seconds"):
        parse_topology({"name": "t", "switches": 1, "agents": 1}, "t.yml", {"seconds": "-1"})


def test_run_record_says_declared_shaping_is_not_applied() -> None:
    from vnetbench.runs.recording import link_record

    topology = parse_topology({"name": "t", "switches": 2, "agents": 2,
                               "links": {"backbone": {"delay": "10ms"}}}, "t.yml")
    record = link_record(topology)
    assert list(record.declared) == ["backbone"]
    assert record.declared["backbone"]["delay"] == "10ms"  # as written: units kept
    assert record.applied == {}


def test_the_measured_pair_is_the_user_s_choice() -> None:
    from vnetbench.scenarios.pair import pick_pair

    data = {"name": "room", "switches": 3, "agents": 37}
    default = pick_pair(parse_topology(data, "t.yml"))
    assert [a.name for a in default] == ["agent1", "agent3"]  # first and last switch
    chosen = parse_topology({**data, "measure": {"from": "agent1", "to": "agent37"}}, "t.yml")
    assert [a.name for a in pick_pair(chosen)] == ["agent1", "agent37"]
    again = parse_topology(chosen.model_dump(mode="json", by_alias=True), "run.json")
    assert again.measure == chosen.measure


@pytest.mark.parametrize("link", [
    {"rate": "10kbit"}, {"rate": "100gbit"}, {"delay": "1s"}, {"delay": "500ms", "jitter": "500ms"},
    {"delay": "10ms", "jitter": "10ms"}, {"rate": "800mbit", "delay": "300ms"},
    {"rate": "133mbit", "mtu": 65535}, {"mtu": 576}, {"mtu": 9000, "rate": "1mbit"},
])
def test_link_bounds_are_inclusive_where_the_mechanism_allows(link: dict[str, object]) -> None:
    """The edges of every bound still validate (each bound is the mechanism's, not ours)."""
    parse_topology({"name": "t", "switches": 2, "agents": 2, "links": {"backbone": link}},
                   "t.yml")


def test_delay_line_bound_matches_the_shaper() -> None:
    """The model's delay-line queue is the one the shaper binds (it is a script, not a
    module, so the number is read from its text)."""
    import re

    from vnetbench.model.topology import DELAY_LINE_PACKETS

    script = (ROOT / "images" / "tools" / "vnetbench-shape").read_text()
    assert re.search(r"^QUEUE_PACKETS = (\d+)$", script, re.MULTILINE).group(1) == str(
        DELAY_LINE_PACKETS)


def test_set_goes_through_the_same_bounds() -> None:
    from vnetbench.shaping.assign import parse_assignment, with_link_setting

    topology = parse_topology({"name": "t", "switches": 2, "agents": 2}, "t.yml")
    assignment = parse_assignment("backbone.rate=0mbit")
    with pytest.raises(UserError, match=r"--set backbone.rate=0mbit: a rate of 0 shapes"):
        with_link_setting(topology, assignment, assignment.values[0])


def test_whole_seconds_pass_unchanged() -> None:
    topology = parse_topology({"name": "t", "switches": 2, "agents": 2,
                               "settings": {"seconds": 2.0, "ping_interval_ms": 3}}, "t.yml")
    assert topology.settings.seconds == 2 and topology.settings.ping_interval_ms == 3


@pytest.mark.parametrize("name", ["agent1\n", "agent1\n  privileged: true", "\nagent1"])
def test_a_name_is_matched_whole(name: str) -> None:
    """re.match(...$) took 'agent1\\n' (its $ matches before a final newline), whose
    newline broke the compose file."""
    with pytest.raises(UserError, match="is not a usable name"):
        parse_topology({"name": "t", "switches": 1,
                        "agents": [{"name": name, "switch": "switch1"}]}, "t")
    with pytest.raises(UserError, match="is not a usable name"):
        parse_topology({"name": name, "switches": 1, "agents": 1}, "t")



def test_the_settings_a_measurement_reads_are_marked_where_declared() -> None:
    """MEASUREMENT_SETTINGS is read off the Settings model's marks (Measured[...]):
    topologies that differ in them share a stack, in any other setting they do not."""
    base = parse_topology({"name": "t", "switches": 2, "agents": 2}, "t")
    assert len(MEASUREMENT_SETTINGS) == 24  # the room's seven and rr_parallel among them
    for name, changed in (("udp_length", 1400), ("seconds", 2.0), ("machines", 50)):
        other = base.model_copy(update={
            "settings": base.settings.model_copy(update={name: changed})})
        assert (other.stack_key() == base.stack_key()) == (name in MEASUREMENT_SETTINGS)
    assert "machines" not in MEASUREMENT_SETTINGS


@pytest.mark.parametrize(("fault", "said"), [
    ({"at": "1s"}, "a fault is one of kill, link, loss or delay"),
    ({"kill": "switch2", "for": "1s"}, "drop 'for'"),
    ({"loss": "10%"}, "needs 'for'"),
    ({"link": "backbone", "for": "2s", "restart_after": "1s"}, "restart_after belongs"),
    ({"kill": "switch9"}, "faults.0.kill: no switch named 'switch9'"),
    ({"delay": "990ms", "for": "1s"}, "faults.0.delay"),
    ({"kill": "switch1", "restart_after": "10min"}, "not a duration"),
    ({"kill": "switch1", "restart_after": "90s"}, "restart_after: 90s is outside"),
    ({"loss": "0%", "for": "1s"}, "a loss burst of 0%"),
])
def test_a_wrong_fault_is_named_with_its_fix(fault: dict[str, str], said: str) -> None:
    with pytest.raises(UserError, match=re.escape(said)):
        parse_topology({"name": "t", "switches": 2, "agents": 2,
                        "links": {"backbone": {"delay": "20ms"}}, "faults": [fault]}, "t")


def test_faults_read_back_as_written() -> None:
    topology = parse_topology({"name": "t", "switches": 2, "agents": 2, "faults": [
        {"at": "5s", "kill": "switch2", "restart_after": "3s"},
        {"at": "1s", "delay": "200ms", "for": "2s"}]}, "t")
    assert [f.describe() for f in topology.faults] == [
        "switch2 killed, started again after 3s", "backbone delay +200ms for 2s"]
    assert parse_topology(topology.model_dump(mode="json", by_alias=True), "t") == topology
