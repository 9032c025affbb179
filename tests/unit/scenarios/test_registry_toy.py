"""docs/extending.md, proven: a toy scenario (its declaration, with settings, matrix
variants and a figure of its own, and its code) and a toy overlay (its adapter and its
services template), the files the guide lists (tests/toy.py), written in a temporary
package, go through the registries, the settings (a field under its name, its flat
name, its `run` option), validation, render, the catalogue, the matrix's plan (its
cells on the toy overlay and the baseline) and `vnetbench report` of the rows its
cells write as a matrix writes them (report.md and report.html, its headline and its
declared figure), with no other file of vnetbench touched.

Each registration is the one line the script stands in for (tests/toy.py's REGISTER),
made in a fresh interpreter before anything reads the registry."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.toy import FILES, GUIDE, PACKAGE, PROJECT, REGISTER, toy_env, write_toy

# Run in a fresh interpreter after REGISTER, in the temporary package's folder: each
# assertion names what it proves; the last line is what the test reads back.
THROUGH = '''
import json
from dataclasses import replace
from ipaddress import IPv4Network
from pathlib import Path
from typing import Any

import yaml
from typer.main import get_command
from typer.testing import CliRunner

from vnetbench.model.addressing import plan_addresses
from vnetbench.model.capabilities import Capability
from vnetbench.cli import app
from vnetbench.commands.options import settings_given
from vnetbench.errors import UserError
from vnetbench.runtime.images import ImageSet
from vnetbench.core.outcome import Applicable, NotApplicable
from vnetbench.overlays import OVERLAY_NAMES, overlay_for
from vnetbench.deploy.render import render_compose
from vnetbench.analysis.results import ResultSet
from vnetbench.analysis.runrecord import RunRecord, overlay_facts
from vnetbench.runs.cells import completed_state, group_cells
from vnetbench.runs.matrix import CELLS, cell_topology, plan_cells
from vnetbench.runs.passes import write_pass
from vnetbench.scenarios import SCENARIOS, ScenarioContext, get_scenario
from vnetbench.model.topology import MEASUREMENT_SETTINGS, parse_topology
from vnetbench import declared as registered
from toy_bench.declared import DECLARATION, ToySettings

scenario = get_scenario("toy")  # through the registry, as `vnetbench run toy`
assert (scenario.name, scenario.metrics) == ("toy", DECLARATION.metrics)
assert "toy" in OVERLAY_NAMES  # `overlay: toy`, --overlay toy

# its settings: under its name, by its flat name (files written before), as an option
toys = {"name": "toys", "switches": 2, "agents": 3, "overlay": "toy"}
nested = parse_topology({**toys, "settings": {"toy": {"weight": 2}}}, "toys.yml",
                        overlays=OVERLAY_NAMES)
flat = parse_topology({**toys, "settings": {"toy_weight": 3}}, "old.yml",
                      overlays=OVERLAY_NAMES)
given = settings_given({"toy_weight": 4})
option = parse_topology(toys, "toys.yml", given, OVERLAY_NAMES,
                        {"toy_weight": "--toy-weight"})
options = [o for p in get_command(app).commands["run"].params for o in p.opts if "toy" in o]
refused = CliRunner().invoke(app, ["run", "--toy-weight", "0", "toy"])

topology = nested
scenario.check(topology)
try:
    scenario.check(parse_topology({"name": "one", "switches": 1, "agents": 1}, "one"))
    raise AssertionError("check let one agent through")
except UserError as error:
    assert "counts two agents at least" in str(error)
wireguard = overlay_for(topology, "wireguard")
assert isinstance(scenario.applicability(wireguard), NotApplicable)
assert Capability.AGENT_POOLS in scenario.needs_for(topology)
overlay = overlay_for(topology)
assert overlay.name == "toy" and scenario.applicability(overlay) == Applicable()

stack = scenario.stack_topology(topology, overlay)
plan = plan_addresses(stack, "toy", IPv4Network("10.170.0.0/16"))
compose = yaml.safe_load(render_compose(stack, overlay, "run1", plan, ImageSet()))
assert {"agent1", "agent2", "agent3"} <= set(compose["services"])
assert sorted(compose["services"]["agent1"]) == [  # the keys of its own template
    "container_name", "image", "labels", "networks"]

counted = registered.catalogue().find("toy_agents")
assert counted is not None and counted.unit == "agents" and counted.lead

# the matrix: its plan of every registered scenario on three overlays, quick
overlays = [overlay_for(topology, name) for name in ("baseline", "wireguard", "toy")]
cells = plan_cells(overlays, list(SCENARIOS.values()), quick=True)
mine = [cell for cell in cells if cell.scenario is scenario]
groups = group_cells(mine, lambda cell: cell_topology(topology, cell, True))

# its cells' passes, written as the matrix writes them (runs/cells.py, runs/passes.py):
# rows by pass, run.json's cells; each group of cells one stack, here none
directory = Path("matrix")
directory.mkdir()
results = ResultSet(directory)
no_stack: Any = None  # the toy measures nothing: no engine, no stack
record = RunRecord(kind="matrix", quick=True, overlays=overlay_facts(overlays))
for number, group in enumerate(groups, 1):
    run_id = f"toys-{number}"
    for task in group.tasks():
        task = replace(task, rows_variant=task.cell_variant)
        context = ScenarioContext(stack=no_stack, topology=task.topology,
                                  overlay=group.overlay, plan=plan, raw_dir=directory)
        for pass_no in range(1, task.topology.settings.passes + 1):
            write_pass(results, task.cell(run_id), pass_no,
                       scenario.run_pass(context, pass_no), scenario.settings(task.topology),
                       "")
    for key in group.keys:
        record.cells[key] = completed_state(run_id, [k for k in group.keys if k != key])
results.write()
record.save(directory)
reported = CliRunner().invoke(app, ["report", str(directory)])
assert reported.exit_code == 0, reported.output
print(json.dumps({
    "weights": [t.settings.of(ToySettings).weight for t in (nested, flat, option)],
    "flat": nested.settings.flat()["toy_weight"], "given": given,
    "measured": "toy_weight" in MEASUREMENT_SETTINGS, "options": options,
    "refused": [refused.exit_code, " ".join(refused.output.split())],
    "in_matrix": "toy" in CELLS,
    "cells": [cell.key for cell in mine],
    "groups": [group.keys for group in groups],
    "record": record.cells,
    "said": " ".join(reported.output.split()),
    "lines": [" ".join(line.split()) for line in (directory / "report.md").read_text(
        ).splitlines()],
    "html": (directory / "report.html").read_text(),
    "pngs": sorted(p.name for p in directory.glob("*.png"))}))
'''


# both tests read one fresh interpreter's findings (5 s): on one pytest-xdist worker it
# runs once, not once a worker
pytestmark = pytest.mark.xdist_group("registry-toy")


@pytest.fixture(scope="module")
def through(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """The toy package written, and THROUGH's findings in a fresh interpreter."""
    tmp_path = tmp_path_factory.mktemp("toy")
    write_toy(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", REGISTER + THROUGH], cwd=tmp_path, capture_output=True,
        text=True, env={**toy_env(tmp_path), "DOCKER_HOST": "unix:///nonexistent"})
    assert done.returncode == 0, done.stderr
    found: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return found


def test_a_toy_scenario_and_overlay_go_through_validation_render_catalogue_matrix(
        through: dict[str, object]) -> None:
    """Its variants make the matrix's cells on every overlay with agent pools (the
    baseline's and the toy's, none on WireGuard), the cells of one overlay on one
    stack (it shares one), each completed in run.json."""
    assert through["in_matrix"] is True
    assert through["cells"] == ["toy/baseline/light", "toy/baseline/heavy",
                                "toy/toy/light", "toy/toy/heavy"]
    assert through["groups"] == [["toy/baseline/light", "toy/baseline/heavy"],
                                 ["toy/toy/light", "toy/toy/heavy"]]
    assert through["record"] == {
        "toy/baseline/light": "completed (toys-1; shared stack with: toy/baseline/heavy)",
        "toy/baseline/heavy": "completed (toys-1; shared stack with: toy/baseline/light)",
        "toy/toy/light": "completed (toys-2; shared stack with: toy/toy/heavy)",
        "toy/toy/heavy": "completed (toys-2; shared stack with: toy/toy/light)"}


def test_the_report_of_the_toy_s_matrix_has_its_headline_table_and_figure(
        through: dict[str, object]) -> None:
    """report.md and report.html of the rows its cells wrote: its lead figure in the
    headline, its table in its declared units, its declared plot and figure drawn."""
    lines, html = through["lines"], str(through["html"])
    assert isinstance(lines, list)
    assert "Toy: agents counted" in str(through["said"])  # `report`'s headline
    # its declared figure (toy_agents against toy_weight) in both reports
    assert "![toy-by-weight](toy-by-weight.png)" in lines
    assert "toy-by-weight.png" in through["pngs"]
    assert 'id="figure-toy-by-weight"' in html
    assert "Toy: agents counted against the weight" in html
    # 3 agents counted once (light) or thrice (heavy), plus the pass's number (1, 2)
    assert ("| toy | Toy: agents counted | heavy 10.5 agents ±7 %; light 4.5 agents ±16 % "
            "| heavy 10.5 agents ±7 %; light 4.5 agents ±16 % |") in lines
    assert ("| Toy: agents counted | light | 4 to 5 agents (n 2, CV 15.7 %) "
            "| 4 to 5 agents (n 2, CV 15.7 %) |") in lines
    # every series, with the setting its figure reads and the variant's parameter
    assert ("| toy | toy | heavy | toy_switches | switches | 2 | 0.0 % | 2 switches | 3 | 3 |"
            in lines)
    assert "### toy" in lines  # its own table, its metrics in their declared units
    assert 'id="figure-toy-agents"' in html  # its headline metric's figure
    assert "![toy-agents](toy-agents.png)" in lines  # its declared bar plot
    assert "toy-agents.png" in through["pngs"]


def test_the_toy_scenario_s_settings_are_a_field_a_flat_name_and_an_option(
        through: dict[str, object]) -> None:
    """Nested in a topology, by the flat name older files hold, as `run`'s option:
    each reaches the scenario; a wrong value is refused naming the option."""
    assert through["weights"] == [2, 3, 4]
    assert (through["flat"], through["given"]) == (2, {"toy_weight": 4})
    assert through["measured"] is True  # a setting the measurement reads, not the stack
    assert through["options"] == ["--toy-weight"]
    refused = through["refused"]
    assert isinstance(refused, list)
    status, said = refused
    assert status == 2 and "--toy-weight (settings.toy_weight)" in said
    assert "greater than or equal to 1" in said and "Traceback" not in said


def guide_tables(text: str) -> dict[str, list[str]]:
    """docs/extending.md's file tables: section -> the path each row names first (its
    `file` column's first code span)."""
    tables: dict[str, list[str]] = {}
    section = ""
    for line in text.splitlines():
        if line.startswith("## "):
            section = line[3:].strip()
        elif line.startswith("| ") and not line.startswith(("| file |", "|---")):
            first = re.search(r"`([^`]+)`", line.split(" | ")[0])
            assert first is not None, f"a row of {section}'s table names no file: {line}"
            tables.setdefault(section, []).append(first.group(1))
    return tables


def test_extending_md_lists_exactly_the_files_the_toy_writes(tmp_path: Path) -> None:
    """The guide's tables of an overlay's and a scenario's files are the files the toy
    writes and the registries its REGISTER adds to, one for one, so neither drifts."""
    tables = guide_tables((PROJECT / "docs" / "extending.md").read_text())
    for section, files in GUIDE.items():
        assert tables[section] == list(files), section
    written = {p.relative_to(tmp_path / PACKAGE).as_posix() for p in write_toy(tmp_path)}
    toy_files = {f for files in GUIDE.values() for f in files.values() if "." in f}
    assert written == {"__init__.py", *toy_files} and set(FILES) == toy_files
    registries = {f for files in GUIDE.values() for f in files.values() if "." not in f}
    assert {name for name in registries if f".{name} = " in REGISTER
            or f".{name}[" in REGISTER} == registries
