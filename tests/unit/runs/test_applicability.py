"""A task the overlay cannot run: one row per pass in its cell (the key passed with
it: run id, scenario, overlay, variant, method, parameters), nothing started."""

from pathlib import Path

from vnetbench.analysis.results import ResultSet, load_results
from vnetbench.core.outcome import State
from vnetbench.core.schema import Variant, parameter_column
from vnetbench.model.topology import load_topology
from vnetbench.overlays.baseline import Baseline
from vnetbench.runs.applicability import runnable
from vnetbench.runs.plan import Task
from vnetbench.runtime.paths import TOPOLOGIES
from vnetbench.scenarios import get_scenario


def test_a_task_the_overlay_cannot_run_says_why_in_its_own_cell(tmp_path: Path) -> None:
    topology = load_topology(TOPOLOGIES / "two-sites.yml")
    topology = topology.model_copy(update={"overlay": "baseline"})
    step = Variant("mtu 1400", method="vpncloud", parameters={"round": 3})
    task = Task(get_scenario("join"), topology, variant="mtu 1400", rows_variant=step)
    results = ResultSet(tmp_path)
    assert not runnable(task, Baseline(), results, "two-sites-run-7")
    frame = load_results(tmp_path)  # written as each pass's row is
    assert len(frame) == topology.settings.passes
    assert set(frame["run_id"]) == {"two-sites-run-7"}
    assert set(zip(frame["scenario"], frame["overlay"], frame["variant"], frame["method"],
                   strict=True)) == {("join", "baseline", "mtu 1400", "vpncloud")}
    assert set(frame[parameter_column("round")]) == {3}
    assert set(frame["state"]) == {State.NOT_APPLICABLE.value}
    assert sorted(frame["pass"]) == list(range(1, topology.settings.passes + 1))


def test_a_step_names_its_rows_and_keeps_the_runs_method() -> None:
    run = Variant(method="vpncloud", parameters={"round": 2})
    assert run.step("unshaped") == Variant("unshaped", "vpncloud", {"round": 2})
    assert run.step(None) is run
