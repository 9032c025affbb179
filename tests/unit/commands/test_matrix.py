"""matrix --overlay takes run's and sweep's form (names separated by commas) as well as
the option repeated; either way each name is checked, and one named twice is refused,
before the engine is asked."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from vnetbench.cli import app

runner = CliRunner()


def asked(monkeypatch: pytest.MonkeyPatch, keyword: str = "overlay_names"
          ) -> list[list[str] | None]:
    """What run_matrix is called with for `keyword` (overlay_names, scenario_names);
    it is not run."""
    import vnetbench.runs.matrix

    calls: list[list[str] | None] = []

    def run_matrix(*args: object, **kwargs: object) -> Path:
        calls.append(kwargs.get(keyword))  # type: ignore[arg-type]
        raise SystemExit(0)

    monkeypatch.setattr(vnetbench.runs.matrix, "run_matrix", run_matrix)
    return calls


@pytest.mark.parametrize("options", [
    ["--overlay", "baseline,wireguard"], ["--overlay", "baseline", "--overlay", "wireguard"],
    ["--overlay", " baseline , wireguard "]])
def test_both_forms_name_the_same_overlays(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                           options: list[str]) -> None:
    calls = asked(monkeypatch)
    runner.invoke(app, ["matrix", *options, "--out", str(tmp_path)])
    assert calls == [["baseline", "wireguard"]]


@pytest.mark.parametrize(("options", "said"), [
    (["--overlay", "baseline,nope"], "no overlay called 'nope'"),
    (["--overlay", "baseline", "--overlay", "baseline"], "names an overlay twice"),
    (["--overlay", "wireguard,wireguard"], "names an overlay twice")])
def test_a_wrong_or_repeated_name_is_refused_first(monkeypatch: pytest.MonkeyPatch,
                                                   tmp_path: Path, options: list[str],
                                                   said: str) -> None:
    calls = asked(monkeypatch)
    result = runner.invoke(app, ["matrix", *options, "--out", str(tmp_path)])
    assert result.exit_code == 2 and said in " ".join(result.output.split())
    assert calls == []


def test_no_overlay_given_is_every_overlay(monkeypatch: pytest.MonkeyPatch,
                                           tmp_path: Path) -> None:
    calls = asked(monkeypatch)
    runner.invoke(app, ["matrix", "--out", str(tmp_path)])
    assert calls == [None]


@pytest.mark.parametrize(("options", "named"), [
    ([], None),
    (["--scenario", "flood"], ["flood"]),
    (["--scenario", "throughput, transactions"], ["throughput", "transactions"]),
    (["--scenario", "throughput", "--scenario", "flood"], ["throughput", "flood"])])
def test_scenario_takes_both_forms(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                   options: list[str], named: list[str] | None) -> None:
    calls = asked(monkeypatch, "scenario_names")
    runner.invoke(app, ["matrix", *options, "--out", str(tmp_path)])
    assert calls == [named]


@pytest.mark.parametrize(("options", "said"), [
    (["--scenario", "nope"], "nope is not a scenario of the matrix's"),
    (["--scenario", "transfer"], "transfer is not a scenario of the matrix's"),  # a method's
    (["--scenario", ","], "no name is not a scenario"),
    (["--scenario", "flood,flood"], "names a scenario twice"),
    (["--scenario", "flood", "--slo", "throughput.tcp_mbit>=1"],
     "throughput is not among what the matrix runs (flood)")])
def test_a_wrong_scenario_is_refused_before_the_engine(monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path, options: list[str],
                                                       said: str) -> None:
    calls = asked(monkeypatch, "scenario_names")
    result = runner.invoke(app, ["matrix", *options, "--out", str(tmp_path)])
    assert result.exit_code == 2 and said in " ".join(result.output.split()), result.output
    assert calls == []


def test_the_cells_planned_are_the_scenarios_asked_for() -> None:
    from vnetbench.model.topology import parse_topology
    from vnetbench.overlays import overlay_for
    from vnetbench.runs.matrix import parse_matrix_scenarios, plan_cells
    from vnetbench.scenarios import SCENARIOS

    base = parse_topology({"name": "t", "switches": 2, "agents": 2}, "test", overrides={})
    wanted = parse_matrix_scenarios("flood,throughput")
    cells = plan_cells([overlay_for(base, "baseline")],
                       [s for s in SCENARIOS.values() if s.name in wanted], quick=True)
    assert {cell.scenario.name for cell in cells} == {"flood", "throughput"}
