"""A scenario declares itself in one place: its name, help line, metrics with their
units and matrix variants come from its declaration, and every reader (the
registry, the catalogue, `run`'s help, the matrix) takes them from there."""

from __future__ import annotations

import pytest
import typer.main
from typer.testing import CliRunner

from vnetbench.cli import app
from vnetbench.declared import DECLARATIONS, DECLARED, catalogue
from vnetbench.declared.throughput import DECLARATION as THROUGHPUT
from vnetbench.runs.matrix import CELLS
from vnetbench.scenarios import SCENARIOS


def test_each_registered_scenario_is_made_from_its_declaration() -> None:
    assert list(SCENARIOS) == [d.name for d in DECLARATIONS]
    for declaration in DECLARATIONS:
        scenario = SCENARIOS[declaration.name]
        assert scenario.declaration is declaration
        assert (scenario.name, scenario.description, scenario.metrics) == (
            declaration.name, declaration.description, declaration.metrics)


def test_the_catalogue_is_the_declarations_metrics_in_registration_order() -> None:
    declared = [m.name for d in DECLARATIONS for m in d.metrics]
    assert [m.name for m in catalogue()][2:] == declared  # after skipped, outside load


def test_the_matrix_cells_are_the_declared_variants() -> None:
    assert {d.name: d.variants for d in DECLARATIONS if d.variants} == CELLS
    assert "transfer" not in CELLS and not DECLARED["transfer"].variants


def test_a_declared_unit_is_found_by_a_concrete_name_of_its_shape() -> None:
    assert THROUGHPUT.unit("tcp_mbit") == "Mbit/s"
    assert THROUGHPUT.unit("cpu_agent_percent") == "% of a core"  # cpu_{role}_percent
    with pytest.raises(KeyError, match="throughput declares no metric 'room_p99_ms'"):
        THROUGHPUT.unit("room_p99_ms")


def test_a_pass_s_values_take_their_units_from_the_declaration() -> None:
    assert THROUGHPUT.emitted({"tcp_mbit": 9.5, "cpu_switch_percent": None}) == {
        "tcp_mbit": (9.5, "Mbit/s"), "cpu_switch_percent": (None, "% of a core")}
    with pytest.raises(KeyError, match="declares no metric 'tcp_gbit'"):
        THROUGHPUT.emitted({"tcp_gbit": 1.0})  # an undeclared metric never reaches a row


def test_run_names_every_registered_scenario_in_its_help_and_its_error() -> None:
    run = typer.main.get_command(app).commands["run"]  # type: ignore[attr-defined]
    scenarios_help = next(p for p in run.params if p.name == "scenarios").help
    refused = " ".join(CliRunner().invoke(app, ["run"]).output.split())
    names = ", ".join(DECLARED)
    assert scenarios_help == f"Scenarios: {names}."
    assert f"one or more scenarios ({names})" in refused
