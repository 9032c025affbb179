"""Matrix cells of one shape on one stack (runs/cells.py): which cells share, in what
order, what a --resume runs again and on how many stacks, a failed group's cells
stopped, and what the matrix's record says of each cell and each shared stack."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests.unit.deploy.test_render import vnet_build
from vnetbench.analysis.results import ResultSet
from vnetbench.analysis.runrecord import RunRecord, read_record
from vnetbench.core.schema import PASS, SCENARIO, VARIANT, Variant
from vnetbench.model.topology import Fault, Topology, load_topology
from vnetbench.overlays import OVERLAY_TYPES, Overlay
from vnetbench.runs import cells as cells_module
from vnetbench.runs import passes
from vnetbench.runs.cells import (
    Cell,
    CellGroup,
    group_cells,
    record_group,
    run_group,
    sharing_key,
)
from vnetbench.runs.matrix import cell_topology, finished_cells, plan_cells
from vnetbench.runs.passes import run_passes
from vnetbench.runs.plan import Task, prepared_task
from vnetbench.runs.recording import StackClock
from vnetbench.runtime.paths import TOPOLOGIES
from vnetbench.scenarios import SCENARIOS, ScenarioContext, get_scenario
from vnetbench.scenarios.base import PassResult

BASE = load_topology(TOPOLOGIES / "two-sites.yml")
PAIR = ("throughput", "transactions", "loaded_latency")


def overlays(features: bool = True) -> list[Overlay]:
    return [vnet_build(features) if name == "vnet" else kind()
            for name, kind in OVERLAY_TYPES.items()]


def grouped(cells: list[Cell]) -> list[list[str]]:
    return [group.keys for group in group_cells(cells, lambda c: cell_topology(BASE, c, True))]


def cell(scenario: str, overlay: Overlay, variant: str = "default", **overrides: Any) -> Cell:
    return Cell(get_scenario(scenario), overlay, variant, dict(overrides))


def test_the_pair_scenarios_of_one_overlay_share_one_stack_in_the_matrix_s_order() -> None:
    groups = grouped(plan_cells(overlays(), list(SCENARIOS.values())))
    # throughput first: its idle memory is read on a stack nothing measured on yet
    assert groups[0] == [f"{s}/baseline/default" for s in PAIR]
    for overlay in ("wireguard", "openvpn", "tinc", "nebula"):
        assert [f"{s}/{overlay}/default" for s in PAIR] in groups
    # vNet's throughput rows set tls and limits themselves (tls: true is not the
    # default's unset tls by key), so only transactions and loaded_latency share there
    assert ["transactions/vnet/default", "loaded_latency/vnet/default"] in groups
    assert ["throughput/vnet/tls"] in groups and ["throughput/vnet/tls-limits"] in groups
    # every other cell alone: flood's stack has its limits and four agents, the
    # others do not share at all
    alone = [g for g in groups if len(g) == 1]
    assert {g[0].split("/")[0] for g in alone} == {
        "throughput", "join", "config", "flood", "failover", "room"}
    assert sum(len(g) for g in groups) == 52  # every cell once
    assert len(groups) == 52 - 2 * 5 - 1
    # a build without TLS runs vNet's cells plain: the plain throughput row joins them
    assert ["throughput/vnet/plain", "transactions/vnet/default-plain",
            "loaded_latency/vnet/default-plain"] in grouped(
        plan_cells(overlays(False), list(SCENARIOS.values())))


def test_a_group_comes_where_its_first_cell_came() -> None:
    baseline = OVERLAY_TYPES["baseline"]()
    cells = [cell("throughput", baseline), cell("failover", baseline),
             cell("loaded_latency", baseline, passes=1, seconds=3)]
    assert grouped(cells) == [["throughput/baseline/default",
                               "loaded_latency/baseline/default"],
                              ["failover/baseline/default"]]


def test_a_scenario_that_does_not_share_runs_alone_even_on_the_same_stack() -> None:
    baseline = OVERLAY_TYPES["baseline"]()
    cells = [cell("failover", baseline, "a"), cell("failover", baseline, "b"),
             cell("flood", baseline, "a"), cell("flood", baseline, "b")]
    assert grouped(cells) == [[c.key] for c in cells]
    assert not get_scenario("failover").shares_stack
    assert not get_scenario("join").shares_stack and not get_scenario("flood").shares_stack


def test_overrides_of_the_stack_split_a_group_and_those_of_a_measurement_keep_it() -> None:
    baseline = OVERLAY_TYPES["baseline"]()
    cells = [cell("throughput", baseline, "default"),
             cell("throughput", baseline, "mtu", tunnel_mtu=1400),  # the stack's
             cell("throughput", baseline, "short", seconds=1, pings=5, passes=1),  # measured
             cell("transactions", baseline, "mtu", tunnel_mtu=1400, passes=1)]
    assert grouped(cells) == [
        ["throughput/baseline/default", "throughput/baseline/short"],
        ["throughput/baseline/mtu", "transactions/baseline/mtu"]]
    other = OVERLAY_TYPES["wireguard"]()
    assert grouped([cell("throughput", baseline), cell("transactions", other)]) == [
        ["throughput/baseline/default"], ["transactions/wireguard/default"]]


def test_each_cell_of_a_group_is_a_task_with_its_own_rows_variant() -> None:
    baseline = OVERLAY_TYPES["baseline"]()
    cells = [cell("throughput", baseline), cell("transactions", baseline, "short", passes=1)]
    group = group_cells(cells, lambda c: cell_topology(BASE, c, True))[0]
    tasks = group.tasks()
    assert [t.cell_variant for t in tasks] == [Variant("default"),
                                               Variant("short", parameters={"passes": 1})]
    assert [t.topology.settings.passes for t in tasks] == [2, 1]  # each its own passes
    assert [t.step_name for t in tasks] == ["throughput/default", "transactions/short"]
    assert [t.directory_name for t in tasks] == ["throughput", "transactions"]
    prepared = prepared_task(_Prepared(tasks[1].topology), tasks[1], Variant("run's"))
    assert prepared.rows_variant == Variant("short", parameters={"passes": 1})
    assert prepared.cell("r").name == "transactions/baseline/short"
    step = Task(get_scenario("throughput"), tasks[0].topology, variant="1 client")
    assert prepared_task(_Prepared(step.topology), step, Variant("x").step(step.variant)
                         ).rows_variant == Variant("1 client")  # a method's step as before


def test_quick_is_a_ceiling_on_every_cell_its_own_lower_values_kept() -> None:
    """--quick's passes, seconds and pings bound the cells that set their own longer
    ones (the room's and transactions' 3 s), and leave a cell's fewer passes alone."""
    baseline = OVERLAY_TYPES["baseline"]()
    by_key = {c.key: c for c in plan_cells([baseline], list(SCENARIOS.values()))}
    settings = {key: cell_topology(BASE, cell, True).settings for key, cell in by_key.items()}
    room, transactions = settings["room/baseline/n20"], settings["transactions/baseline/default"]
    assert (room.seconds, room.passes, room.machines) == (2, 2, 20)
    assert (transactions.seconds, transactions.passes) == (2, 1)
    assert {(s.passes <= 2, s.seconds <= 2, s.pings <= 50) for s in settings.values()} == {
        (True, True, True)}
    assert cell_topology(BASE, by_key["room/baseline/n20"], False).settings.seconds == 3
    # the topology's own fewer passes and shorter streams stand too (they were raised to
    # --quick's 2 and 2 s)
    short = BASE.model_copy(update={"settings": BASE.settings.model_copy(
        update={"passes": 1, "seconds": 1})})
    mine = cell_topology(short, by_key["throughput/baseline/default"], True).settings
    assert (mine.passes, mine.seconds) == (1, 1)


class _Prepared:
    """What prepared_task reads of a prepared topology."""

    def __init__(self, topology: Topology) -> None:
        self.topology, self.remark = topology, ""
        self.overlay = OVERLAY_TYPES["baseline"]()


def test_a_resumed_group_runs_its_uncompleted_cells_on_one_stack(tmp_path: Path) -> None:
    cells = [c for c in plan_cells(overlays(), list(SCENARIOS.values()))
             if c.overlay.name == "baseline"]
    record = RunRecord(cells={
        "throughput/baseline/default": "completed (run-1; shared stack with: "
                                       "transactions/baseline/default)",
        "transactions/baseline/default": "stopped: interrupted",
        "loaded_latency/baseline/default": "stopped: interrupted"})
    done = finished_cells(tmp_path, 3, record)
    assert done == {"throughput/baseline/default"}
    todo = [c for c in cells if c.key not in done]
    assert ["transactions/baseline/default", "loaded_latency/baseline/default"] in grouped(todo)


def group_of(*keys: str) -> CellGroup:
    baseline = OVERLAY_TYPES["baseline"]()
    cells = tuple(cell(key, baseline) for key in keys)
    return CellGroup(cells, tuple(cell_topology(BASE, c, True) for c in cells))


def test_a_failed_group_stops_every_cell_of_it(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    def failing(*args: object, **kwargs: object) -> Path:
        raise RuntimeError("the engine went away")

    monkeypatch.setattr(cells_module, "run_tasks", failing)
    header = RunRecord(cells={"flood/baseline/default": "completed (run-0)"})
    with pytest.raises(RuntimeError):
        run_group(group_of(*PAIR), tmp_path / "runs", ResultSet(tmp_path), header, tmp_path)
    assert header.cells == {"flood/baseline/default": "completed (run-0)",
                            **{f"{s}/baseline/default": "stopped: the engine went away"
                               for s in PAIR}}
    assert read_record(tmp_path).cells["throughput/baseline/default"] == "running"


def shared_stack_timings() -> list[dict[str, Any]]:
    clock = StackClock("throughput", [1, 2, 3], "nothing")
    clock.marks = [0.0, 10.0, 70.0, 75.0]
    clock.cells = {"throughput/baseline/default": 35.0,
                   "transactions/baseline/default": 15.0,
                   "loaded_latency/baseline/default": 9.5}
    return [clock.record()]


def test_a_shared_stack_is_recorded_once_and_each_cell_with_its_own_measurement(
        tmp_path: Path) -> None:
    header = RunRecord(kind="matrix")
    record_group(header, group_of(*PAIR), shared_stack_timings(), "run-7")
    assert header.cells["throughput/baseline/default"] == (
        "completed (run-7; shared stack with: transactions/baseline/default, "
        "loaded_latency/baseline/default)")
    assert header.cells["loaded_latency/baseline/default"].startswith("completed (run-7; ")
    assert header.cell_timings["transactions/baseline/default"] == {
        "bring_up_s": 0.0, "restart_s": 0.0, "measure_s": 15.0, "teardown_s": 0.0,
        "shared_stack": "run-7"}
    [stack] = header.shared_stacks
    assert (stack.run, stack.cells) == ("run-7", [f"{s}/baseline/default" for s in PAIR])
    assert (stack.bring_up_s, stack.measure_s, stack.teardown_s) == (10.0, 60.0, 5.0)
    header.save(tmp_path)  # and read back as written
    assert read_record(tmp_path).shared_stacks == header.shared_stacks


def test_a_cell_alone_keeps_its_whole_stack_and_a_plain_state() -> None:
    header = RunRecord(kind="matrix")
    clock = StackClock("flood", [1], "nothing")
    clock.marks, clock.cells = [0.0, 10.0, 30.0, 35.0], {"flood/baseline/default": 19.9}
    record_group(header, group_of("flood"), [clock.record()], "run-8")
    assert header.cells == {"flood/baseline/default": "completed (run-8)"}
    assert header.cell_timings["flood/baseline/default"] == {
        "bring_up_s": 10.0, "restart_s": 0.0, "measure_s": 20.0, "teardown_s": 5.0}
    assert header.shared_stacks == []
    # a group of which one cell was not supported: the other had the stack alone
    header = RunRecord(kind="matrix")
    clock.cells = {"throughput/baseline/default": 19.9}
    record_group(header, group_of("throughput", "transactions"), [clock.record()], "run-9")
    assert header.shared_stacks == [] and header.cells["throughput/baseline/default"] == (
        "completed (run-9)")
    assert header.cell_timings["transactions/baseline/default"]["measure_s"] == 0.0


class FakeStack:
    """What measuring pass by pass asks of a running stack."""

    def __init__(self, directory: Path) -> None:
        self.rendered = SimpleNamespace(directory=directory, plan=None)

    def placement_settings(self) -> dict[str, object]:
        return {}

    def deaths(self) -> list[object]:
        return []

    def containers(self) -> list[object]:
        return []


def test_cells_on_one_stack_keep_their_rows_pass_numbers_raw_folders_and_seconds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(passes, "host_sample", lambda ours: None)
    monkeypatch.setattr(passes, "outside_cores", lambda before, after: None)
    seen: list[tuple[str, int, Path]] = []

    def measuring(name: str) -> Callable[[ScenarioContext, int], PassResult]:
        def run_pass(context: ScenarioContext, pass_no: int) -> PassResult:
            seen.append((name, pass_no, context.raw_dir.relative_to(tmp_path)))
            return PassResult({"tcp_mbit": (1.0, "Mbit/s")}, {})
        return run_pass

    for name in ("throughput", "transactions"):
        monkeypatch.setattr(get_scenario(name), "run_pass", measuring(name))
    baseline = OVERLAY_TYPES["baseline"]()
    cells = [cell("throughput", baseline), cell("transactions", baseline, "short", passes=1)]
    [group] = group_cells(cells, lambda c: cell_topology(BASE, c, True))
    tasks = [prepared_task(_Prepared(t.topology), t, Variant()) for t in group.tasks()]
    results, seconds = ResultSet(tmp_path), {}
    run_passes(tasks, FakeStack(tmp_path), baseline, results,  # type: ignore[arg-type]
               [1, 2, 3], "r", lambda label: [], None, seconds)
    assert seen == [*(("throughput", p, Path("raw/throughput-default")) for p in (1, 2, 3)),
                    ("transactions", 1, Path("raw/transactions-short"))]
    rows = {(r[SCENARIO], r[VARIANT], r[PASS], r.get("var_passes")) for r in results.rows}
    assert rows == {("throughput", "default", 1, None), ("throughput", "default", 2, None),
                    ("throughput", "default", 3, None), ("transactions", "short", 1, 1)}
    assert list(seconds) == ["throughput/baseline/default", "transactions/baseline/short"]


def test_a_scenario_under_faults_runs_on_a_stack_of_its_own() -> None:
    """A schedule kills, restarts and re-shapes: no later cell may find that stack."""
    baseline = OVERLAY_TYPES["baseline"]()
    faulted = BASE.model_copy(update={"faults": [Fault.model_validate(
        {"at": "2s", "link": "backbone", "for": "1s"})]})
    room, throughput = cell("room", baseline), cell("throughput", baseline)
    assert sharing_key(room, BASE) is not None
    assert sharing_key(room, faulted) is None and sharing_key(throughput, faulted) is None
    # a scenario that injects no faults shares as ever
    assert sharing_key(cell("transactions", baseline), faulted) is not None
