"""`--json` / `--json-file` on run, matrix, sweep, capacity and doctor: the document is
the whole of stdout (what people read goes to stderr), the file holds the same, both
validate against their shipped schema, and the document says what the exit status
says. The runs are replaced by recorded results (tests/data/results-named: five
scenarios on baseline and wireguard), the capacity search and doctor's engine by
constructed records: no engine is asked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pandas as pd
import pytest
from typer.testing import CliRunner

from tests.unit.terminal.test_exitstatus import COMMANDS, NAMED, fake_run, recorded, with_states
from vnetbench.analysis.results import load_results
from vnetbench.cli import app
from vnetbench.core.outcome import State
from vnetbench.generators.fileschemas import shipped

runner = CliRunner()
RUN = COMMANDS["run"]


def document(result: Any, schema: str) -> dict[str, Any]:
    """stdout as one JSON document (nothing else there), valid against its schema."""
    parsed: dict[str, Any] = json.loads(result.stdout)
    jsonschema.validate(parsed, shipped(schema))
    return parsed


def test_run_json_is_the_whole_of_stdout_and_holds_each_cells_figures(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_run(monkeypatch, recorded(tmp_path))
    written = tmp_path / "run-result.json"
    result = runner.invoke(app, [*RUN, "--out", str(tmp_path / "out"), "--json",
                                 "--json-file", str(written)])
    assert result.exit_code == 0, result.output
    found = document(result, "run-result.schema.json")
    assert json.loads(written.read_text()) == found
    assert (found["format_version"], found["command"], found["exit_status"]) == (1, "run", 0)
    assert found["directory"] == str(tmp_path / "results")
    assert found["kind"] == "matrix" and found["overlays"] == ["baseline", "wireguard"]
    tcp = {f["overlay"]: f for f in found["figures"]
           if (f["scenario"], f["metric"]) == ("throughput", "tcp_mbit")}
    assert tcp["wireguard"]["passes"] == 2  # recorded: 726.9 and 761.5 Mbit/s
    assert tcp["wireguard"]["median"] == pytest.approx((726.923077 + 761.538462) / 2)
    assert (tcp["baseline"]["low"], tcp["baseline"]["high"]) == pytest.approx((945, 990))
    assert found["targets"] == [] and found["failed"] == []
    assert "tcp_mbit" in result.stderr  # the comparison table, for people, on stderr


def test_a_missed_target_and_a_dead_path_are_in_the_document_and_exit_1(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dead = with_states(load_results(NAMED), "throughput", "wireguard", {2}, State.DEAD)
    fake_run(monkeypatch, recorded(tmp_path, dead))
    result = runner.invoke(app, [*RUN, "--out", str(tmp_path / "out"), "--json",
                                 "--slo", "throughput.tcp_mbit>=800"])
    assert result.exit_code == 1, result.output
    found = document(result, "run-result.schema.json")
    assert found["exit_status"] == 1
    verdicts = {t["overlay"]: (t["met"], t["value"], t["passes"]) for t in found["targets"]}
    assert verdicts == {"baseline": (True, 967.5, 2),
                        "wireguard": (False, pytest.approx(726.923077), 1)}
    assert {t["target"]["text"] for t in found["targets"]} == {"throughput.tcp_mbit>=800"}
    assert found["failed"] == [{"scenario": "throughput", "overlay": "wireguard",
                                "variant": "default", "passes": [2],
                                "states": ["path dead"]}]
    said = " ".join(result.stderr.split())
    assert "MISSED throughput.tcp_mbit>=800 on wireguard" in said  # the lines, on stderr
    assert "1 target(s) missed" in said


def test_a_met_target_exits_0_with_its_verdict_in_the_document(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_run(monkeypatch, recorded(tmp_path))
    result = runner.invoke(app, [*RUN, "--out", str(tmp_path / "out"), "--json",
                                 "--slo", "throughput.tcp_mbit>=500"])
    assert result.exit_code == 0, result.output
    found = document(result, "run-result.schema.json")
    assert [t["met"] for t in found["targets"]] == [True, True]


def test_what_a_pass_prints_for_people_goes_to_stderr_under_json(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each pass prints its result line on stdout as it ends (runs/passes.py's emit):
    with --json it is on stderr, and stdout parses."""
    import vnetbench.runs.comparison as comparison
    from vnetbench.terminal.ui import out_console

    directory = recorded(tmp_path)
    fake_run(monkeypatch, directory)

    def measured(*_: object, **__: object) -> Path:
        out_console.print("throughput wireguard pass 1: tcp_mbit=726.9")
        return directory

    monkeypatch.setattr(comparison, "run_overlays", measured)
    args = [*RUN, "--out", str(tmp_path / "out")]
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    document(result, "run-result.schema.json")
    assert "pass 1: tcp_mbit=726.9" in result.stderr
    plain = runner.invoke(app, args)  # without --json, people's lines stay on stdout
    assert "pass 1: tcp_mbit=726.9" in plain.stdout
    assert not out_console.stderr


@pytest.mark.parametrize("command", ["matrix", "sweep"])
def test_matrix_and_sweep_print_the_same_document(
        command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_run(monkeypatch, recorded(tmp_path))
    result = runner.invoke(app, [*COMMANDS[command], "--out", str(tmp_path / "out"),
                                 "--json"])
    assert result.exit_code == 0, result.output
    found = document(result, "run-result.schema.json")
    assert found["command"] == command and found["figures"]


def test_run_json_file_that_is_the_topology_is_refused_before_anything_starts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    topology = tmp_path / "two-sites.yml"
    topology.write_text("name: two-sites\nswitches: 2\nagents: 2\n")
    before = topology.read_text()

    def never(*_: object, **__: object) -> Path:
        raise AssertionError("the run started")

    import vnetbench.runs.comparison as comparison
    monkeypatch.setattr(comparison, "run_overlays", never)
    result = runner.invoke(app, ["run", "throughput", "--topology", str(topology),
                                 "--out", str(tmp_path / "out"), "--json-file",
                                 str(topology)])
    assert result.exit_code == 2, result.output
    assert f"run --json-file {topology}: it is --topology" in " ".join(result.output.split())
    assert topology.read_text() == before and not (tmp_path / "out").exists()


def searched(monkeypatch: pytest.MonkeyPatch, directory: Path, steps: list[Any]) -> None:
    import vnetbench.runs.capacity as capacity
    import vnetbench.runs.comparison as comparison
    from vnetbench.overlays import overlay_for

    def run(plan: Any, out_dir: Path) -> tuple[Path, capacity.Search]:
        search = capacity.Search(plan.start, plan.most, plan.precision, whole=True)
        search.steps = steps
        return directory, search

    monkeypatch.setattr(comparison, "require_overlays",
                        lambda topology, names: {n: overlay_for(topology, n) for n in names})
    monkeypatch.setattr(capacity, "run_capacity", run)


CAPACITY = ["capacity", "--slo", "p99=50ms,failed=0", "--overlay", "wireguard", "--max",
            "40", "--passes", "2"]


def test_capacity_json_holds_the_search_and_its_answer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from vnetbench.runs.capacity import Step

    searched(monkeypatch, tmp_path, [
        Step(10, True, "p99 9 ms, failed 0; host CPU 30 %: met"),
        Step(20, True, "p99 21 ms, failed 0; host CPU 55 %: met"),
        Step(40, False, "p99 80 ms, failed 3; host CPU 97 %: missed, p99 80ms > 50ms",
             "this machine: its CPU was 97 % busy (all cores)"),
        Step(30, True, "p99 41 ms, failed 0; host CPU 80 %: met")])
    written = tmp_path / "capacity.json"
    result = runner.invoke(app, [*CAPACITY, "--out", str(tmp_path), "--json",
                                 "--json-file", str(written)])
    assert result.exit_code == 0, result.output
    found = document(result, "capacity.schema.json")
    assert json.loads(written.read_text()) == found
    assert (found["command"], found["exit_status"], found["overlay"], found["by"]) == (
        "capacity", 0, "wireguard", "machines")
    assert (found["start"], found["max"], found["passes"]) == (10, 40, 2)
    assert [c["key"] for c in found["slo"]] == ["p99", "failed"]
    assert found["slo"][0]["bound"] == 50.0 and found["slo"][0]["metric"] == "room_p99_ms"
    assert (found["largest"], found["smallest_missed"]) == (30, 40)
    assert found["limit"].startswith("this machine: its CPU was 97 % busy")
    assert [s["size"] for s in found["steps"]] == [10, 20, 40, 30]
    assert "largest that met p99=50ms,failed=0: 30 machines" in result.stderr


def test_capacity_json_when_no_size_met_says_so_and_exits_1(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from vnetbench.runs.capacity import Step

    searched(monkeypatch, tmp_path, [Step(10, False, "p99 80 ms: missed", "the overlay")])
    result = runner.invoke(app, [*CAPACITY, "--out", str(tmp_path), "--json"])
    assert result.exit_code == 1, result.output
    found = document(result, "capacity.schema.json")
    assert (found["exit_status"], found["largest"], found["smallest_missed"]) == (1, None, 10)


def no_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    """doctor's own checks, the engine and Compose answering nothing."""
    import vnetbench.engines
    from vnetbench.engines.base import EngineVersions

    class Silent:
        def versions(self) -> EngineVersions:
            return EngineVersions(None, None)

    monkeypatch.setattr(vnetbench.engines, "local", Silent)  # doctor's command fetches it


def test_doctor_json_not_ready_is_its_result_and_exits_3(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    no_engine(monkeypatch)
    written = tmp_path / "doctor.json"
    result = runner.invoke(app, ["doctor", "--json", "--json-file", str(written)])
    assert result.exit_code == 3, result.output
    found = document(result, "doctor.schema.json")
    assert json.loads(written.read_text()) == found
    assert (found["command"], found["exit_status"], found["ready"]) == ("doctor", 3, False)
    checks = {c["name"]: c for c in found["checks"]}
    assert checks["docker engine"]["ok"] is False and checks["docker engine"]["required"]
    assert checks["/dev/net/tun"]["required"] is False
    assert "verdict: NOT ready" in result.stderr  # the table and verdict, on stderr


def test_doctor_ready_when_every_required_check_passed() -> None:
    from vnetbench.deploy.doctor import diagnosis

    ready = diagnosis([("docker engine", True, "26.1"), ("compose v2", True, "2.27"),
                       ("tools image", True, "sha256:1"), ("/dev/net/tun", False, "no")])
    assert ready.ready
    assert not diagnosis([("docker engine", True, "26.1"), ("compose v2", True, "2.27"),
                          ("tools image", False, "missing")]).ready
    assert not diagnosis([("docker engine", True, "26.1")]).ready  # never checked: not ready


def test_doctor_without_json_prints_the_table_on_stdout(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    no_engine(monkeypatch)
    result = runner.invoke(app, ["doctor"])
    assert result.exit_code == 3
    assert "verdict: NOT ready" in result.stdout


@pytest.mark.parametrize(("schema", "instance"), [
    ("run-result.schema.json", {"format_version": 2}),
    ("capacity.schema.json", {"format_version": 1, "command": "capacity", "exit_status": 0,
                              "largest": "many"}),
    ("doctor.schema.json", {"format_version": 1, "command": "doctor", "exit_status": 0,
                            "ready": True, "checks": [{"name": "x", "ok": "yes"}]}),
])
def test_a_wrong_document_is_refused(schema: str, instance: dict[str, Any]) -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(instance, shipped(schema))


def test_the_figures_leave_out_failed_and_time_series_rows() -> None:
    from vnetbench.commands.documents import cell_figures

    dead = with_states(load_results(NAMED), "throughput", "wireguard", {1, 2}, State.DEAD)
    figures = cell_figures(dead)
    assert not [f for f in figures if (f.scenario, f.overlay) == ("throughput", "wireguard")]
    assert all(f.passes <= 2 for f in figures)  # one value per pass: no series' points
    assert cell_figures(pd.DataFrame()) == []
