"""Integration tests run on a real Docker engine (`make test` starts one), except
those marked `browser` (a real Chromium, no engine: `make test` installs it)."""

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from python_on_whales import docker
from typer.testing import CliRunner

from vnetbench.cli import app
from vnetbench.core.outcome import State
from vnetbench.engines import local, require_engine
from vnetbench.engines.build import build_project_images
from vnetbench.engines.fabric import fabric_rules
from vnetbench.measure.room import MARK as ROOM_MARK
from vnetbench.runtime.labels import run_filter as label_filter


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """One test at a time (`-n auto`, the unit tests' setting, gives none here): two at
    once measure each other. Tried on 2 cores (2026-12-07, two workers, one module
    each): 1,005 s against 1,626 s, but 11 failed: pings lost on unshaped paths (194 of
    200, 47 of 50), bounds set for an idle host missed, tests that found a neighbour's
    run; nothing on a 2-core machine may run beside a measurement."""
    return 0


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests that restart the engine run after every other test."""
    items.sort(key=lambda item: item.get_closest_marker("engine_restart") is not None)


@pytest.fixture(scope="session")
def engine_and_images() -> None:
    require_engine()  # fails loudly: `make test` must have started the engine
    build_project_images()


@pytest.fixture(autouse=True)
def engine_for_the_test(request: pytest.FixtureRequest) -> None:
    """Every integration test but a browser test gets the engine and images."""
    if request.node.get_closest_marker("browser") is None:
        request.getfixturevalue("engine_and_images")


def leftovers(run_id: str) -> list[str]:
    """Names of anything still present that carries the run's label."""
    label = label_filter(run_id)
    names = [c.name for c in docker.container.list(all=True, filters=label)]
    names += [n.name for n in docker.network.list(filters=label)]
    names += [v.name for v in docker.volume.list(filters=label)]
    names += [f"iptables: {rule}" for _, rule in fabric_rules(local().hosts(), run_id)]
    return names


# The legitimate states of a pass that measured, whatever else ran on the machine: its
# figures stand, and its status may add marks that leave them standing. A test says
# which other sentences are legitimate for what it checks (`stands`'s `said`: a
# partial join, a build without the feature); anything else (failed, path dead where
# the test needs a path, a rate above the link) fails it.
MEASURED_STATES = tuple(state.value for state in State if state.measured)  # ok, partial
STANDING_MARKS = (
    # beside other programs (the test runner itself) the figure stands, marked
    # (runs/outcomes.py): "measured under outside load: 0.53 cores busy ..."
    r"measured under outside load: [^;]*",
    # a join's gate opened without a quiet moment (scenarios/join.py)
    r"the host stayed busy: the gate opened after [^;]*",
    # a latency added under load below zero is withheld, the rest stands
    # (vnetbench/analysis/plausibility.py): on an idle core each ping waits for it to wake
    r"\w+_added_p\d+_ms implausible: [^;]*below the testbed's resolution, not given[^;]*",
)


def as_measured(status: str) -> str:
    """A pass's status less the marks that leave its figures standing (STANDING_MARKS);
    what else it said is kept, "ok" when nothing is."""
    for mark in STANDING_MARKS:
        status = re.sub(rf"(^|; ){mark}", "", status)
    return status.removeprefix("ok").removeprefix("; ") or "ok"


def stands(status: str, *said: str) -> bool:
    """Did the pass measure, its figures standing: its status "ok" once the marks that
    leave a figure standing are taken out (as_measured), or starting with one of the
    sentences the test names legitimate (`said`: "partial: 19 of 20", ...)?"""
    measured = as_measured(status)
    return measured == "ok" or (bool(said) and measured.startswith(said))


def room_records(directory: Path, pass_no: int = 1) -> list[dict[str, Any]]:
    """Each machine's own record (`vnetbench-room {json}`) of a room pass, as kept raw."""
    return [json.loads(path.read_text().split(ROOM_MARK, 1)[1]) for path in
            (directory / "room" / "raw").glob(f"room-pass{pass_no}-agent*.txt")]


# The quick matrix's cells (test_matrix.py): the shared stack's three and flood on a stack
# of its own, with a reference method
MATRIX_SCENARIOS = "throughput,transactions,loaded_latency,flood"
MATRIX_OPTIONS = ("--quick", "--overlay", "baseline", "--scenario", MATRIX_SCENARIOS,
                  "--method", "instageni")


@dataclass(frozen=True)
class QuickMatrix:
    """One `matrix --quick` run on the baseline, read by every test whose assertions its
    cells answer (test_matrix.py, test_room_pair.py, test_throughput_baseline.py): each
    of those cells once in the session, not once per test (about 30 s)."""

    out: Path  # --out
    directory: Path  # the matrix's results directory


@pytest.fixture(scope="session")
def quick_matrix(tmp_path_factory: pytest.TempPathFactory) -> QuickMatrix:
    out = tmp_path_factory.mktemp("quick-matrix")
    result = CliRunner().invoke(app, ["matrix", *MATRIX_OPTIONS, "--out", str(out)])
    assert result.exit_code == 0, result.output
    return QuickMatrix(out, Path(result.stdout.strip().splitlines()[-1]))
