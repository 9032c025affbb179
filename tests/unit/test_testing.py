"""The test handle's pure parts: where a topology comes from, and calibration's table."""

from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from vnetbench import labels, testing
from vnetbench.engine import Listed
from vnetbench.errors import UserError
from vnetbench.measure.cpu import cpu_jiffies
from vnetbench.runs.calibration import Figure, figure_rows
from vnetbench.testing import topology_from


def test_a_topology_from_a_mapping_with_overlay_and_links_overridden() -> None:
    topology = topology_from({"name": "t", "switches": 2, "agents": 2}, "wireguard",
                             {"backbone": {"delay": "10ms", "loss": "1%"}})
    assert topology.overlay == "wireguard"
    assert topology.links.backbone.delay == 10.0 and topology.links.backbone.loss == 1.0
    assert not topology.links.site.is_shaped


def test_a_topology_by_the_name_of_one_of_vnetbench_s_own(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # not found here: the packaged topologies are searched
    assert topology_from("two-sites.yml", None, None).name == "two-sites"
    (tmp_path / "mine.yml").write_text("name: mine\nswitches: 1\nagents: 2\n")
    assert topology_from("mine.yml", None, None).name == "mine"


def test_a_bad_topology_or_link_is_the_usual_one_paragraph_error() -> None:
    with pytest.raises(UserError, match="agents"):
        topology_from({"name": "t", "switches": 2, "agents": "ten"}, None, None)
    with pytest.raises(UserError, match=r"links=\{'backbone': ...\} is not a valid link "
                                        r"profile: rate: .*100mbit"):
        topology_from({"name": "t", "switches": 2, "agents": 2}, None,
                      {"backbone": {"rate": "100mbps"}})


def test_host_cpu_counts_busy_time_only() -> None:
    # user nice system idle iowait irq softirq steal guest guest_nice
    assert cpu_jiffies("cpu  100 5 50 1000 20 3 2 1 7 0\ncpu0 1 2 3\n") == 161


def test_figures_say_which_targets_are_met() -> None:
    rows = figure_rows([Figure("ratio", 0.95, "ratio", ">= 0.90", True),
                        Figure("idle", 3.2, "% of a core", "< 2", False),
                        Figure("raw", None, "Mbit/s")])
    assert [row[""] for row in rows] == ["met", "NOT met", ""]
    assert rows[2]["value"] == "n/a Mbit/s"


class HangingCompose:
    """A compose command that does not end (as `up --wait` behind a container whose
    health check is next run an hour later)."""

    context = "."

    def docker_compose_command(self) -> list[str]:
        return ["sh", "-c", "sleep 30", "compose"]


def test_the_plugin_s_bring_up_is_bounded_and_names_what_is_still_starting(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """compose's --wait had no bound: a container still starting held the test for the
    health check's 1 h interval. The whole command is bounded by timeout_s (here 1 s,
    against a command that would take 30 s), then the containers still starting are
    named."""
    listed = [Listed("1", "p-conductor", "running", "starting", {labels.ROLE: "conductor"}),
              Listed("2", "p-agent1", "running", "healthy", {labels.ROLE: "agent"})]
    monkeypatch.setattr(testing, "list_containers", lambda filters: listed)
    monkeypatch.setattr(testing, "start_period_over", lambda container: False)
    stack = SimpleNamespace(run_id="r", rendered=SimpleNamespace(directory=tmp_path))
    began = time.monotonic()
    with pytest.raises(UserError, match=r"within 1 s: 1 container\(s\) still starting "
                                        r"\(p-conductor\)"):
        testing.start(HangingCompose(), stack, timeout_s=1)  # type: ignore[arg-type]
    assert time.monotonic() - began < 30


def test_agents_never_ready_are_named_and_the_rest_runs(monkeypatch: pytest.MonkeyPatch,
                                                        tmp_path: Path) -> None:
    """Past its start period an agent still unchecked is not ready (an overlay that
    lost its join), named in a warning; a server in that state is an error."""
    listed = [Listed("1", "p-hub-switch1", "running", "healthy", {labels.ROLE: "switch"}),
              Listed("2", "p-agent1", "running", "starting", {labels.ROLE: "agent"}),
              Listed("3", "p-agent2", "running", "healthy", {labels.ROLE: "agent"})]
    monkeypatch.setattr(testing, "list_containers", lambda filters: listed)
    monkeypatch.setattr(testing, "start_period_over", lambda container: True)
    stack = SimpleNamespace(run_id="r", rendered=SimpleNamespace(directory=tmp_path))
    with pytest.warns(UserWarning, match="p-agent1"):
        assert testing.start(HangingCompose(), stack, timeout_s=1) == [  # type: ignore[arg-type]
            "p-agent1"]
    listed[0] = Listed("1", "p-hub-switch1", "exited", None, {labels.ROLE: "switch"})
    with pytest.raises(UserError, match="p-hub-switch1 did not become ready"):
        testing.start(HangingCompose(), stack, timeout_s=1)  # type: ignore[arg-type]
