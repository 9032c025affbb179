"""A venue's verdict on a real engine (issue #60 item 4): topologies/venue.yml, its
machines cut to 12 and the contest's phases cut to 5 s each, under a target the link's
mechanism makes certain to miss (every machine's 2 MiB statement within 1 ms: 12
copies cannot cross a 1 Gbit/s port in less than 0.2 s). The run must say first that
the contest did not hold and what broke first, in its lines, its JSON document and
report.md, and exit 1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from tests.integration.conftest import leftovers
from vnetbench.cli import app
from vnetbench.report.markdown import build_report

pytestmark = pytest.mark.integration

VENUE = Path(__file__).parents[2] / "topologies" / "venue.yml"
SHORT = {"name": "contest-short", "timeout_s": 60, "phases": [
    {"name": "statement", "seconds": 5,
     "at_once": [{"name": "statement", "at_s": 0, "size": "2MiB"}],
     "mix": [{"name": "scoreboard", "size": "20KiB", "rate": 0.5}]},
    {"name": "steady", "seconds": 5,
     "mix": [{"name": "submission", "size": "4KiB", "rate": 0.5}]},
    {"name": "end-rush", "seconds": 5,
     "mix": [{"name": "submission", "size": "4KiB", "rate": 1}]}]}


def test_a_venue_that_cannot_hold_says_what_broke_first(tmp_path: Path) -> None:
    workload = tmp_path / "short.yml"
    workload.write_text(yaml.safe_dump(SHORT))
    document = tmp_path / "run.json"
    result = CliRunner().invoke(app, [
        "run", "room", "-t", str(VENUE), "--machines", "12", "--workload", str(workload),
        "--out", str(tmp_path / "out"), "--json-file", str(document),
        "--slo", "room.burst_last_ms_statement<=1,room.phase_failed_steady<=0"],
        env={"COLUMNS": "300"})
    said = json.loads(document.read_text())
    assert result.exit_code == 1, result.output
    assert said["exit_status"] == 1 and said["venue"]["held"] is False
    (cell,) = said["venue"]["cells"]
    assert cell["first"]["phase"] == "statement" and cell["first"]["event"] == "statement"
    assert cell["first"]["value"] >= 12 * 2 * 2**20 * 8 / 1e9 * 1000  # ms over the port
    lines = result.stdout.splitlines()  # the passes' lines first, as they ran
    venue = next(i for i, line in enumerate(lines) if line.startswith("Venue: "))
    assert lines[venue].startswith(
        "Venue: NOT HELD on baseline: first broke in phase statement (at-once event "
        "statement): room.burst_last_ms_statement<=1")
    table = next(i for i, line in enumerate(lines) if "room_phase_p99_ms_steady" in line)
    targets = next(i for i, line in enumerate(lines) if line.startswith("MISSED "))
    assert venue < table < targets  # the summary opens on the verdict
    directory = Path(said["directory"])
    assert leftovers(directory.name) == []
    text = build_report(directory)[0].read_text()
    summary = text[text.index("## Summary"):]
    assert "NOT HELD on baseline: first broke in phase statement" in summary.split("\n\n")[1]
