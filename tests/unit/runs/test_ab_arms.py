"""`ab`'s arms differ only in what was asked: for every kind of change an arm accepts,
the settings recorded for A and B (the topology as run.json records it) are compared
key by key, through the command line as a user gives it."""

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from vnetbench.cli import app
from vnetbench.model.topology import Topology
from vnetbench.runs.ab import Arm

runner = CliRunner()

# Values a careless copy changes: a byte count no unit divides (format_bytes gave
# '953.7MiB', read back as 1000026931), a delay past %g's six digits.
BASE = """name: lab
overlay: baseline
switches: 2
agents: 2
links:
  site: {}
  backbone: {delay: 0.1234567ms}
settings:
  seconds: 10
  transfer_bytes: 1000000001
"""
OTHER = BASE.replace("name: lab", "name: other").replace("backbone: {delay: 0.1234567ms}",
                                                          "backbone: {rate: 90mbit}")


def flat(data: Any, prefix: str = "") -> dict[str, Any]:
    """{'a': {'b': 1}} -> {'a.b': 1}; lists by index."""
    if isinstance(data, dict):
        items = data.items()
    elif isinstance(data, list):
        items = enumerate(data)  # type: ignore[assignment]
    else:
        return {prefix: data}
    out: dict[str, Any] = {}
    for key, value in items:
        out |= flat(value, f"{prefix}.{key}" if prefix else str(key))
    return out


def recorded(topology: Topology) -> dict[str, Any]:
    """What run.json records of an arm's topology (runrecord.new_record's topology)."""
    return flat(topology.model_dump(mode="json"))


def differences(arms: list[Arm]) -> set[str]:
    a, b = (recorded(arm.topology) for arm in arms)
    return {key for key in a.keys() | b.keys() if a.get(key) != b.get(key)}


@pytest.fixture
def arms_of(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """`vnetbench ab` as typed, stopped where the session would begin: the arms."""
    (tmp_path / "lab.yml").write_text(BASE)
    (tmp_path / "other.yml").write_text(OTHER)
    (tmp_path / "profile.yml").write_text("{}\n")
    caught: list[list[Arm]] = []

    def no_session(scenario: object, arms: list[Arm], *rest: object) -> Path:
        caught.append(arms)
        raise SystemExit(0)

    monkeypatch.setattr("vnetbench.runs.ab.run_ab", no_session)

    def arms(*args: str) -> list[Arm]:
        given = [a.replace("{dir}", str(tmp_path)) for a in args]
        result = runner.invoke(app, ["ab", "throughput", "-t", str(tmp_path / "lab.yml"),
                                     "--seconds", "3", "--passes", "2", *given],
                               env={"DOCKER_HOST": "unix:///nonexistent"})
        assert result.exit_code == 0 and caught, result.output
        return caught.pop()

    return arms


KINDS = [
    (["--b", "tunnel_mtu=1280"], {"settings.tunnel_mtu"}),
    (["--b", "seconds=5"], {"settings.seconds"}),
    (["--b", "backbone.loss=1%"], {"links.backbone.loss"}),
    (["--b", "site.rate=50mbit"], {"links.site.rate"}),
    (["--b", "agent:agent1.delay=5ms"], {"agents.0.link"}),
    (["--b", "overlay=wireguard"], {"overlay"}),
    # an overlay's own settings on an arm that runs it (on another: refused, ignored)
    (["--a", "overlay=wireguard", "--b", "overlay=wireguard", "--b",
      "option.wireguard.mtu=1380"], {"overlay_options.wireguard.mtu"}),
    (["--a", "overlay=vnet", "--b", "overlay=vnet", "--b", "vnet-image=switch=vnet-switch:2"],
     {"overlay_options.vnet.images.switch"}),
    (["--a", "overlay=vnet", "--b", "overlay=vnet", "--b", "vnet-profile={dir}/profile.yml"],
     {"overlay_options.vnet.profile"}),
    # a whole other file: what that file says, the command line's settings kept
    (["--b", "topology={dir}/other.yml"], {"name", "links.backbone.delay",
                                           "links.backbone.rate"}),
    (["--a", "topology={dir}/other.yml"], set()),  # no --b: B is A
    (["--a", "topology={dir}/other.yml", "--b", "topology={dir}/other.yml",
      "--b", "backbone.loss=1%"], {"links.backbone.loss"}),
    ([], set()),  # an A/A
]


@pytest.mark.parametrize(("args", "expected"), KINDS, ids=[" ".join(k[0]) or "A/A"
                                                          for k in KINDS])
def test_arms_differ_only_in_what_was_asked(arms_of: Any, args: list[str],
                                            expected: set[str]) -> None:
    found = differences(arms_of(*args))
    # each asked change shows (an agent's link: every key under it) and nothing else does
    assert all(any(key.startswith(e) for key in found) for e in expected), found
    assert all(any(key.startswith(e) for e in expected) for key in found), found
    for arm in arms_of(*args):  # the command line's settings reach both arms, whatever they read
        assert arm.topology.settings.passes == 2
        if "seconds=5" not in " ".join(arm.spec):
            assert arm.topology.settings.seconds == 3
        assert arm.topology.settings.transfer.bytes == 1_000_000_001


def test_a_copied_topology_keeps_every_value_exactly(tmp_path: Path) -> None:
    """The arms' changes copy the topology through its dump: the dump reads back to the
    same topology (bytes to the byte, delays past six digits)."""
    from vnetbench.model.topology import load_topology

    (tmp_path / "lab.yml").write_text(BASE)
    topology = load_topology(tmp_path / "lab.yml")
    assert topology.settings.transfer.bytes == 1_000_000_001
    for dump in (topology.model_dump(), topology.model_dump(mode="json")):
        assert Topology.model_validate(dump) == topology
