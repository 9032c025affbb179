"""The test handle's pure parts: where a topology comes from, and calibration's table."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest

from vnetbench.deploy import testing
from vnetbench.deploy.testing import topology_from
from vnetbench.engines.base import Listed
from vnetbench.engines.compose import (
    COMPOSE_MARGIN_SECONDS,
    START_SECONDS_PER_SERVICE,
    ComposeDeployment,
    ComposeEngine,
)
from vnetbench.engines.stack import Stack
from vnetbench.engines.usage import cpu_jiffies
from vnetbench.errors import UserError
from vnetbench.runs.calibration import Figure, figure_rows
from vnetbench.runtime import labels


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


class ListingEngine:
    """An engine that only lists (recorded states) and says when each container started
    and its health check's start period; its deployment's wait fails as compose's does."""

    def __init__(self, listed: list[Listed], period_over: bool) -> None:
        self.listed, self.period_over = listed, period_over

    def containers(self, filters: object) -> list[Listed]:
        return self.listed

    def health_started(self, container: Listed) -> tuple[datetime, float]:
        return datetime.now(UTC) - timedelta(seconds=100 if self.period_over else 0), 50.0

    def deployment(self, rendered: object, topology: object) -> SimpleNamespace:
        return SimpleNamespace(up=lambda timeout_s, unready: unready("compose: not ready"))


def listed_stack(tmp_path: Path, listed: list[Listed], period_over: bool) -> Stack:
    # the stack inspects a starting container only once the shortest start period a
    # check gives could be over (here at once: the engine's answer says it is)
    compose = tmp_path / "compose.yml"
    compose.write_text("services: {a: {healthcheck: {start_period: 0.01s}}}\n")
    rendered = SimpleNamespace(run_id="r", project="p", directory=tmp_path,
                               compose_file=compose)
    return Stack(rendered, ListingEngine(listed, period_over), None)  # type: ignore[arg-type]


def test_the_bring_up_is_bounded_and_names_what_is_still_starting(tmp_path: Path) -> None:
    """compose's --wait had no bound: a container still starting held the test for the
    health check's 1 h interval. The settling after a failed wait is bounded by the
    bring-up's timeout (here 1 s), then the containers still starting are named; the
    compose call itself is bounded by the `timeout` command around it."""
    listed = [Listed("1", "p-conductor", "running", "starting", {labels.ROLE: "conductor"}),
              Listed("2", "p-agent1", "running", "healthy", {labels.ROLE: "agent"})]
    stack = listed_stack(tmp_path, listed, period_over=False)
    began = time.monotonic()
    with pytest.raises(UserError, match=r"within 1 s: 1 container\(s\) still starting "
                                        r"\(p-conductor\)"):
        stack.up(timeout_seconds=1)
    assert time.monotonic() - began < 30
    (tmp_path / "c.yml").write_text("services: {a: {}, b: {}, c: {}}\n")
    deployment = ComposeDeployment(SimpleNamespace(compose_file=tmp_path / "c.yml",
                                                   project="p"),  # type: ignore[arg-type]
                                   ComposeEngine())
    call = deployment.compose_client(1).client_config.client_call
    # the wait, the margin, and a second per service to create and start it
    assert call[:4] == ["timeout", "-k", "5",
                        str(round(1 + COMPOSE_MARGIN_SECONDS + 3 * START_SECONDS_PER_SERVICE))]


def test_agents_never_ready_are_named_and_the_rest_runs(tmp_path: Path) -> None:
    """Past its start period an agent still unchecked is not ready (an overlay that
    lost its join), named and the run goes on (the plugin warns); a server in that
    state is an error."""
    listed = [Listed("1", "p-hub-switch1", "running", "healthy", {labels.ROLE: "switch"}),
              Listed("2", "p-agent1", "running", "starting", {labels.ROLE: "agent"}),
              Listed("3", "p-agent2", "running", "healthy", {labels.ROLE: "agent"})]
    assert listed_stack(tmp_path, listed, period_over=True).up(timeout_seconds=1) == [
        "p-agent1"]
    with pytest.warns(UserWarning, match="p-agent1"):
        testing.warn_unready(["p-agent1"])
    listed[0] = Listed("1", "p-hub-switch1", "exited", None, {labels.ROLE: "switch"})
    with pytest.raises(UserError, match="p-hub-switch1 did not become ready"):
        listed_stack(tmp_path, listed, period_over=True).up(timeout_seconds=1)
