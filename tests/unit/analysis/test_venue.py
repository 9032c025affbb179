"""A venue's verdict (issue #60 item 4): topologies/venue.yml states its targets
(`slo:`), a run of the room says first whether the contest held under them and, if
not, what broke first (the phase, the target, the figure beside it), exit 1; bad
targets are refused with exit 2 in one paragraph naming the file and the fix.
Recorded results: tests/data/venue (the contest on venue.yml, baseline holding,
wireguard breaking it; made by the room's own code, its make_results.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from tests.unit.terminal.test_exitstatus import fake_run
from vnetbench.analysis.results import PARQUET, load_results
from vnetbench.analysis.runrecord import read_record
from vnetbench.analysis.slo import check_targets
from vnetbench.analysis.venue import results_verdict, topology_targets
from vnetbench.cli import app
from vnetbench.core.schema import METRIC, OVERLAY, PHASE, VALUE
from vnetbench.errors import UserError
from vnetbench.model.topology import load_topology
from vnetbench.report.markdown import build_report

ROOT = Path(__file__).parents[3]
VENUE = ROOT / "topologies" / "venue.yml"
RECORDED = ROOT / "tests" / "data" / "venue"
runner = CliRunner()


def venue_targets() -> list:
    topology = load_topology(VENUE)
    return topology_targets(topology.slo, topology.workload, str(VENUE))


def verdict_on(frame: pd.DataFrame, reverse: bool = False):
    targets = venue_targets()[::-1] if reverse else venue_targets()
    verdict = results_verdict(frame, check_targets(frame, targets),
                              read_record(RECORDED).topology)
    assert verdict is not None
    return {cell.overlay: cell for cell in verdict.cells}


def with_value(frame: pd.DataFrame, overlay: str, metric: str, value: float,
               phase: str = "") -> pd.DataFrame:
    """The recorded frame with one series of one overlay set to `value` in every pass."""
    rows = (frame[OVERLAY] == overlay) & (frame[METRIC] == metric)
    if phase:
        rows &= frame[PHASE] == phase
    assert rows.any()
    frame = frame.copy()
    frame.loc[rows, VALUE] = value
    return frame


def test_the_shipped_venue_states_its_targets_on_the_contest() -> None:
    topology = load_topology(VENUE)
    assert topology.workload is not None and topology.workload.name == "contest"
    assert topology.switches[-1] == "servers"  # the room's server has its switch alone
    assert [t.text for t in venue_targets()] == [
        "room.room_burst_last_ms_statement<=30000", "room.room_burst_unfinished_statement<=0",
        "room.room_phase_p99_ms_steady<=500", "room.room_phase_p99_ms_end-rush<=500",
        "room.room_phase_failed_steady<=0", "room.room_phase_failed_end-rush<=0"]
    result = runner.invoke(app, ["validate", str(VENUE)])
    assert result.exit_code == 0, result.output


def test_a_contest_that_held_and_one_that_broke_first_in_the_statement() -> None:
    cells = verdict_on(load_results(RECORDED))
    assert cells["baseline"].held and cells["baseline"].first is None
    assert cells["baseline"].line() == ("HELD on baseline: every venue target met "
                                        "(6 of 6).")
    broke = cells["wireguard"]
    assert not broke.held and broke.missed == 3  # the statement, steady p99, end rush
    assert broke.first is not None
    assert (broke.first.phase, broke.first.event, broke.first.value) == (
        "statement", "statement", 40975.0)
    assert broke.line().startswith(
        "NOT HELD on wireguard: first broke in phase statement (at-once event statement): "
        "room.burst_last_ms_statement<=30000: measured 40975 ms (41 s), the target <= "
        "30000 ms (30 s)")


@pytest.mark.parametrize("reverse", [False, True])
def test_what_broke_first_follows_the_contest_not_the_file(reverse: bool) -> None:
    """The statement met, the steady phase's p99 is the first miss; that met too, the
    end rush's lost request; whatever order the file gives the targets in."""
    first = verdict_on(load_results(RECORDED), reverse)["wireguard"].first
    assert first is not None and first.event == "statement"
    frame = with_value(load_results(RECORDED), "wireguard", "room_burst_last_ms", 20_000)
    first = verdict_on(frame, reverse)["wireguard"].first
    assert first is not None
    assert (first.phase, first.target, first.value) == (
        "steady", "room.phase_p99_ms_steady<=500", 621.5)
    frame = with_value(frame, "wireguard", "room_phase_p99_ms", 300, "steady")
    first = verdict_on(frame, reverse)["wireguard"].first
    assert first is not None
    assert (first.phase, first.target, first.value) == (
        "end-rush", "room.phase_failed_end-rush<=0", 1.0)
    assert first.describe().endswith("measured 1 count, the target <= 0 count")


def recorded(tmp_path: Path, overlays: tuple[str, ...] = ("baseline", "wireguard")) -> Path:
    directory = tmp_path / "results"
    shutil.copytree(RECORDED, directory)
    frame = load_results(directory)
    frame[frame[OVERLAY].isin(overlays)].to_parquet(directory / PARQUET, index=False)
    (directory / "results.csv").unlink()
    return directory


def test_run_says_first_the_contest_did_not_hold_and_exits_1(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_run(monkeypatch, recorded(tmp_path))
    result = runner.invoke(app, ["run", "room", "-t", str(VENUE), "--overlay",
                                 "baseline,wireguard", "--out", str(tmp_path / "out")],
                           env={"COLUMNS": "300"})
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()  # the passes' lines go by as they run (here none)
    assert lines[:2] == [
        "Venue: HELD on baseline: every venue target met (6 of 6).",
        "Venue: NOT HELD on wireguard: first broke in phase statement (at-once event "
        "statement): room.burst_last_ms_statement<=30000: measured 40975 ms (41 s), the "
        "target <= 30000 ms (30 s) (3 of 6 target(s) missed)."]
    table = next(i for i, line in enumerate(lines) if "room_phase_p99_ms_steady" in line)
    targets = next(i for i, line in enumerate(lines) if line.startswith("MISSED "))
    assert 2 < table < targets  # then the comparison table, then each target's line
    assert "3 target(s) missed" in " ".join(result.stderr.split())
    report = (tmp_path / "results" / "run.json").read_text()
    assert "room.room_burst_last_ms_statement<=30000" in report  # kept for the report


def test_a_contest_that_held_exits_0_and_says_so_first_in_its_json(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_run(monkeypatch, recorded(tmp_path, ("baseline",)))
    result = runner.invoke(app, ["run", "room", "-t", str(VENUE), "--out",
                                 str(tmp_path / "out"), "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["exit_status"] == 0
    assert document["venue"]["held"] is True
    assert document["venue"]["cells"] == [{"overlay": "baseline", "variant": "default",
                                           "checked": 6, "missed": 0, "first": None,
                                           "held": True}]


def test_the_json_document_names_what_broke_first(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    fake_run(monkeypatch, recorded(tmp_path, ("wireguard",)))
    result = runner.invoke(app, ["run", "room", "-t", str(VENUE), "--overlay", "wireguard",
                                 "--out", str(tmp_path / "out"), "--json"])
    assert result.exit_code == 1, result.output
    document = json.loads(result.stdout)
    assert document["exit_status"] == 1 and document["venue"]["held"] is False
    assert document["venue"]["cells"][0]["first"] == {
        "target": "room.burst_last_ms_statement<=30000", "phase": "statement",
        "event": "statement", "value": 40975.0, "bound": 30000.0, "at_least": False,
        "unit": "ms"}


def test_slo_replaces_the_venues_targets(tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    fake_run(monkeypatch, recorded(tmp_path, ("wireguard",)))
    result = runner.invoke(app, ["run", "room", "-t", str(VENUE), "--overlay", "wireguard",
                                 "--out", str(tmp_path / "out"),
                                 "--slo", "room.burst_last_ms_statement<=45000"])
    assert result.exit_code == 0, result.output
    assert "Venue: HELD on wireguard: every venue target met (1 of 1)." in result.stdout


def test_the_report_says_the_venue_verdict_first(tmp_path: Path) -> None:
    directory = recorded(tmp_path)
    record = read_record(directory)
    record.targets = [t.text for t in venue_targets()]
    record.save(directory)
    path, _ = build_report(directory)
    text = path.read_text()
    summary = text[text.index("## Summary"):]
    verdicts = [line for line in summary.splitlines() if line.startswith(("- ", "**"))]
    assert "HELD on baseline" in verdicts[0]
    assert "NOT HELD on wireguard: first broke in phase statement" in verdicts[1]


@pytest.mark.parametrize(("slo", "said"), [
    (["room.phase_p99_ms_stedy<=500"],
     "the workload contest has no phase 'stedy' (its phases: statement, steady, end-rush)"),
    (["room.burst_last_ms_start<=30000"], "has no event 'start' (its events: statement)"),
    (["room.phase_p99_ms_steady<=fast"], "'fast' is not a number"),
    (["room.phase_p99_ms_steady<=500", "room.phase_p99_ms_steady<=400"],
     "a second bound the same way"),
    (["room.statement_s<=30"], "room has no metric 'statement_s'"),
    (["room.phase_failed_steady>=0"], "can never be missed"),
    ("room.p99_ms=50", "is not SCENARIO.METRIC>=VALUE"),
    (5, "is not a list of targets"),
])
def test_bad_targets_are_refused_naming_the_file_and_the_fix(
        slo: object, said: str, tmp_path: Path) -> None:
    data = yaml.safe_load(VENUE.read_text())
    path = tmp_path / "my-venue.yml"
    path.write_text(yaml.safe_dump({**data, "slo": slo}))
    for args in (["validate", str(path)], ["run", "room", "-t", str(path), "--out",
                                           str(tmp_path / "out")]):
        result = runner.invoke(app, args, env={"DOCKER_HOST": "unix:///nonexistent",
                                               "COLUMNS": "300"})
        text = " ".join(result.output.split())
        assert result.exit_code == 2, text
        assert str(path) in text and said in text
        assert "\n\n" not in result.output.strip() and "Traceback" not in result.output
    assert not (tmp_path / "out").exists()


def test_a_figure_over_the_whole_run_breaks_last() -> None:
    """room.p99_ms (no phase) missed beside the statement: the statement first."""
    frame = load_results(RECORDED)
    targets = [*topology_targets(("room.p99_ms<=1", "room.burst_last_ms_statement<=30000"),
                                 load_topology(VENUE).workload, "t.yml")]
    verdict = results_verdict(frame, check_targets(frame, targets),
                              read_record(RECORDED).topology)
    assert verdict is not None
    cells = {c.overlay: c for c in verdict.cells}
    broke = cells["wireguard"]  # both missed: the statement's comes first
    assert broke.missed == 2 and broke.first is not None and broke.first.event == "statement"
    cell = cells["baseline"]
    assert cell.missed == 1 and cell.first is not None  # room.p99_ms: nothing measured
    assert (cell.first.phase, cell.first.value) == (None, None)
    assert cell.line().startswith("NOT HELD on baseline: first broke in the whole run: "
                                  "room.p99_ms<=1: nothing measured")


def test_a_target_on_a_phase_without_a_workload_is_refused() -> None:
    with pytest.raises(UserError, match="the room runs no workload"):
        topology_targets(("room.phase_p99_ms_steady<=500",), None, "t.yml")
    assert topology_targets(("room.p99_ms<=50",), None, "t.yml")[0].metric == "room_p99_ms"


CLAUSE_PARTS = st.sampled_from(["room", "throughput", "warp", "", ".", "phase_p99_ms_",
                                "burst_last_ms_", "steady", "statement", "end-rush", "<=",
                                ">=", "=", "0", "-1", "500", "1e400", "nan", "ms", "s", ",",
                                " ", "é", "_", "phase_failed_"])


@settings(max_examples=60, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(clauses=st.lists(st.lists(CLAUSE_PARTS, min_size=1, max_size=8).map("".join),
                        min_size=1, max_size=3))
def test_generated_targets_are_taken_or_refused_in_one_paragraph(
        clauses: list[str], tmp_path: Path) -> None:
    data = yaml.safe_load(VENUE.read_text())
    path = tmp_path / "fuzzed.yml"
    path.write_text(yaml.safe_dump({**data, "slo": clauses}, allow_unicode=True))
    result = runner.invoke(app, ["validate", str(path)])
    assert isinstance(result.exception, SystemExit) or result.exception is None
    assert result.exit_code in (0, 2), result.output
    if result.exit_code == 2:
        assert str(path) in " ".join(result.output.split())
        assert "\n\n" not in result.output.strip()


def test_slo_on_a_phase_the_workload_lacks_is_refused_before_the_run(tmp_path: Path) -> None:
    result = runner.invoke(app, ["run", "room", "-t", str(VENUE), "--out",
                                 str(tmp_path / "out"), "--slo", "room.phase_p99_ms_lunch<=50"],
                           env={"DOCKER_HOST": "unix:///nonexistent", "COLUMNS": "300"})
    said = " ".join(result.output.split())
    assert result.exit_code == 2, said
    assert "--slo room.phase_p99_ms_lunch<=50: room.room_phase_p99_ms_lunch<=50: the " \
           "workload contest has no phase 'lunch'" in said
    assert not (tmp_path / "out").exists()


def test_a_venue_without_a_workload_is_checked_against_the_one_given(tmp_path: Path) -> None:
    """validate takes phase targets on a file without a workload (--workload may give
    one); run checks them against the workload it runs."""
    data = {k: v for k, v in yaml.safe_load(VENUE.read_text()).items() if k != "workload"}
    path = tmp_path / "no-workload.yml"
    path.write_text(yaml.safe_dump(data))
    assert runner.invoke(app, ["validate", str(path)]).exit_code == 0
    for workload, said in ((None, "the room runs no workload"),
                           (str(tmp_path / "other.yml"), "has no phase 'steady'")):
        (tmp_path / "other.yml").write_text(yaml.safe_dump({"phases": [
            {"name": "warmup", "seconds": 5, "at_once": [{"name": "statement",
                                                          "size": 100}]}]}))
        args = ["run", "room", "-t", str(path), "--out", str(tmp_path / "out")]
        result = runner.invoke(app, [*args, *(["--workload", workload] if workload else [])],
                               env={"DOCKER_HOST": "unix:///nonexistent", "COLUMNS": "300"})
        text = " ".join(result.output.split())
        assert result.exit_code == 2 and str(path) in text and said in text, text
