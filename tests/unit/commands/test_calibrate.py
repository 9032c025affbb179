"""calibrate's exit status is the contract's: 0 when every figure with a target met
it, 1 when a measured figure missed (named on stderr), 3 when the environment stood
in the way (the engine, or a figure with a target the machine kept from being
measured). The figures are constructed; no engine is asked."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from vnetbench.cli import app
from vnetbench.runs.targets import Figure, calibration_verdict
from vnetbench.terminal.exitstatus import ExitStatus

runner = CliRunner()

MET = Figure("idle cost of a 50-agent topology", 0.8, "% of a core", "< 2", True)
MISSED = Figure("baseline path / raw veth", 0.61, "ratio", ">= 0.90", False)
REFERENCE = Figure("idle host CPU", 3.2, "% of a core")  # no target: never judged
UNMEASURED = Figure("800 pooled vNet agents up and joined", None, "s", "< 30", None,
                    "not measured: no vNet images")


@pytest.mark.parametrize(("figures", "status"), [
    ([MET, REFERENCE], ExitStatus.OK),
    ([MET, MISSED, REFERENCE], ExitStatus.MISSED),
    ([MET, UNMEASURED], ExitStatus.ENVIRONMENT),
    ([MISSED, UNMEASURED], ExitStatus.MISSED),  # a measured miss is the result
    ([REFERENCE], ExitStatus.OK),
])
def test_the_verdict_follows_the_figures(figures: list[Figure], status: ExitStatus) -> None:
    found, lines = calibration_verdict(figures)
    assert found == status
    assert bool(lines) == (status != ExitStatus.OK)


def measured(monkeypatch: pytest.MonkeyPatch, figures: list[Figure]) -> None:
    import vnetbench.runs.calibration

    def measure(runtime: object, out_dir: Path, *args: object
                ) -> tuple[Path, list[Figure]]:
        directory = out_dir / "calibrate-recorded"
        directory.mkdir()
        return directory, figures

    monkeypatch.setattr(vnetbench.runs.calibration, "calibrate", measure)


def test_every_target_met_exits_0(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    measured(monkeypatch, [MET, REFERENCE])
    result = runner.invoke(app, ["calibrate", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "missed" not in result.stderr


def test_a_missed_target_exits_1_and_is_named_on_stderr(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    measured(monkeypatch, [MET, MISSED, REFERENCE])
    result = runner.invoke(app, ["calibrate", "--out", str(tmp_path)])
    assert result.exit_code == 1, result.output
    said = " ".join(result.stderr.split())
    assert ("1 figure(s) missed their target: baseline path / raw veth: 0.61 ratio, "
            "target >= 0.90; exit 1") in said
    assert "NOT met" in result.stdout  # the table still says it, on stdout


def test_a_targeted_figure_not_measured_exits_3(monkeypatch: pytest.MonkeyPatch,
                                                tmp_path: Path) -> None:
    measured(monkeypatch, [MET, UNMEASURED])
    result = runner.invoke(app, ["calibrate", "--out", str(tmp_path)])
    assert result.exit_code == 3, result.output
    assert "800 pooled vNet agents up and joined" in " ".join(result.stderr.split())


def test_no_engine_exits_3_before_anything_is_measured(monkeypatch: pytest.MonkeyPatch,
                                                        tmp_path: Path) -> None:
    """The real calibration, up to its first question to the engine, which does not
    answer."""
    import vnetbench.engines

    monkeypatch.setattr(vnetbench.engines, "engine_version", lambda: None)
    result = runner.invoke(app, ["calibrate", "--out", str(tmp_path)])
    assert result.exit_code == 3, result.output
    assert "The Docker engine does not answer" in " ".join(result.stderr.split())
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_calibrate_json_holds_each_figure_and_the_status(monkeypatch: pytest.MonkeyPatch,
                                                         tmp_path: Path) -> None:
    """stdout is the document alone (the table, and what the measurement printed, on
    stderr), valid against its schema; the file holds the same."""
    import json

    import jsonschema

    import vnetbench.runs.calibration
    from vnetbench.generators.fileschemas import shipped
    from vnetbench.terminal.ui import out_console

    def measure(runtime: object, out_dir: Path, *args: object
                ) -> tuple[Path, list[Figure]]:
        out_console.print("RESULT scenario=throughput overlay=baseline pass=1")
        (out_dir / "calibrate-recorded").mkdir()
        return out_dir / "calibrate-recorded", [MET, MISSED, REFERENCE, UNMEASURED]

    monkeypatch.setattr(vnetbench.runs.calibration, "calibrate", measure)
    written = tmp_path / "calibrate.json"
    result = runner.invoke(app, ["calibrate", "--out", str(tmp_path), "--json",
                                 "--json-file", str(written)])
    assert result.exit_code == 1, result.output
    document = json.loads(result.stdout)
    jsonschema.validate(document, shipped("calibrate.schema.json"))
    assert json.loads(written.read_text()) == document
    assert (document["command"], document["exit_status"]) == ("calibrate", 1)
    assert document["directory"] == str(tmp_path / "calibrate-recorded")
    assert [(f["name"], f["met"]) for f in document["figures"]] == [
        (MET.name, True), (MISSED.name, False), (REFERENCE.name, None),
        (UNMEASURED.name, None)]
    assert "RESULT scenario=throughput" in result.stderr and "NOT met" in result.stderr
