"""Every file vnetbench writes validates against its published schema
(vnetbench/generators/fileschemas.py, shipped in vnetbench/data/schemas/): the real recorded
outputs under tests/data, and the JSON documents the commands print from them."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from dataclasses import asdict
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pandas as pd
import pytest
from typer.testing import CliRunner

from tests.conftest import DATA, history_build
from tests.unit.report.test_history import STEPPED
from vnetbench.cli import app
from vnetbench.generators.fileschemas import DIRECTORY, SCHEMAS, generated, shipped
from vnetbench.runs.calibration import as_json
from vnetbench.runs.targets import Figure, PathRound

runner = CliRunner()
DOCS = Path(__file__).resolve().parents[3] / "docs"


@cache
def validator(name: str) -> jsonschema.protocols.Validator:
    schema = shipped(name)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def errors(name: str, instance: Any) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
            for e in validator(name).iter_errors(instance)][:5]


def plain(value: Any) -> Any:
    """A table cell as JSON holds it: nan as null, numpy scalars as Python's."""
    if hasattr(value, "item"):
        value = value.item()
    return None if isinstance(value, float) and math.isnan(value) else value


def rows(frame: pd.DataFrame) -> Iterator[dict[str, Any]]:
    for record in frame.to_dict("records"):
        yield {str(k): plain(v) for k, v in record.items()}


def telling(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows that show everything a row's schema checks (65 000 rows in all would
    take minutes): per column, a row of each type its values have, of each state, and
    the lowest pass."""
    picked = {int(frame["pass"].idxmin())} if len(frame) else set()
    for column in frame.columns:
        kinds = frame[column].map(lambda v: type(plain(v)).__name__)
        picked |= set(kinds.drop_duplicates().index)
    if "state" in frame.columns:
        picked |= set(frame["state"].drop_duplicates().index)
    return frame.loc[sorted(picked)]


def found(pattern: str) -> list[Path]:
    paths = sorted(DATA.rglob(pattern))
    assert paths, f"no {pattern} under tests/data"
    return paths


@pytest.mark.parametrize("name", list(SCHEMAS))
def test_the_shipped_schema_is_the_generated_one(name: str) -> None:
    assert shipped(name) == generated(name), (
        f"{DIRECTORY / name} is stale: run python -m vnetbench.generators.fileschemas")


def test_no_schema_file_is_left_over() -> None:
    assert {p.name for p in DIRECTORY.glob("*.json")} == set(SCHEMAS)


def test_every_recorded_run_json_validates() -> None:
    for path in found("run.json"):
        assert not errors("run.schema.json", json.loads(path.read_text())), path


def test_every_recorded_results_parquet_validates() -> None:
    for path in found("results.parquet"):
        for row in rows(telling(pd.read_parquet(path))):
            assert not errors("results.schema.json", row), (path, row)


def test_every_recorded_verdicts_csv_validates() -> None:
    for path in found("verdicts.csv"):
        for row in rows(pd.read_csv(path)):
            assert not errors("verdicts.schema.json", row), (path, row)


def test_the_recorded_noise_json_validates() -> None:
    for path in found("noise.json"):
        assert not errors("noise.schema.json", json.loads(path.read_text())), path


def test_events_parquet_from_the_recorded_vnet_logs_validates(tmp_path: Path) -> None:
    """The file a vNet run writes under logs/, made from the logs one recorded."""
    from tests.unit.overlays.vnet.test_adapter import sources
    from vnetbench.measure.events import events_frame, write_events
    from vnetbench.overlays.vnet.profile import load_profile

    write_events(events_frame(sources(), load_profile().events), tmp_path / "events.parquet")
    frame = pd.read_parquet(tmp_path / "events.parquet")
    assert len(frame) > 10 and frame["time"].notna().all()
    document = json.loads(frame.to_json(orient="records", date_format="iso", date_unit="ns"))
    for row in document:
        assert not errors("events.schema.json", row), row
        assert isinstance(json.loads(row["fields"]), dict)
    assert errors("events.schema.json", {**document[0], "fields": {"agent": "agent1"}})


def test_compare_json_validates(data_copy: Callable[[str], Path]) -> None:
    quick = data_copy("results-quick")
    for extra in ([], ["--noise", str(DATA / "ab-aa-baseline"), "--all"]):
        result = runner.invoke(app, ["compare", str(quick), str(quick), "--json", *extra])
        assert result.exit_code == 0, result.output
        document = json.loads(result.stdout)
        assert document and not errors("compare.schema.json", document)


def test_history_json_validates(tmp_path: Path) -> None:
    root = tmp_path / "builds"
    for day, factor in enumerate(STEPPED, start=1):  # a change point at the 6th
        history_build(root, f"day{day:02}", f"2026-11-{day:02}", factor)
    result = runner.invoke(app, ["history", str(root), "--out", str(tmp_path / "h"),
                                 "--noise", str(DATA / "ab-aa-baseline"), "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert any(s["change_points"] for s in document["series"])  # the schema's every part
    assert not errors("history.schema.json", document)


def test_calibration_json_validates() -> None:
    figures = [Figure("bring-up of 50 agents", 12.5, "s", "<= 60 s", True),
               Figure("idle CPU", None, "%", note="not measured")]
    document = json.loads(as_json(figures, {"breakdown": {"create": 1.0}}))
    assert not errors("calibration.schema.json", document)
    # every round of the two-router paths, as calibrate keeps them
    rounds = [PathRound((0.1, 9000.0), (0.08, None), bare_rules=(0.09, 9100.0),
                        order=("vnetbench", "rules", "off"))]
    document = json.loads(as_json(figures, {"path_rounds": [asdict(r) for r in rounds]}))
    assert not errors("calibration.schema.json", document)
    document["path_rounds"][0]["bare_rules"] = [0.09]  # a pair, not one value
    assert errors("calibration.schema.json", document)


@pytest.mark.parametrize(("name", "instance"), [
    ("run.schema.json", {"format_version": 0}),
    ("run.schema.json", {"kind": "banana"}),
    ("results.schema.json", {"run_id": "r", "scenario": "s", "overlay": "o", "variant": "v",
                             "pass": 1, "metric": "m", "value": "fast", "unit": "u",
                             "status": "ok"}),
    ("results.schema.json", {"run_id": "r", "scenario": "s", "overlay": "o", "variant": "v",
                             "pass": 1, "metric": "m", "value": 1.0, "unit": "u",
                             "status": "ok", "colour": "red"}),
    ("noise.schema.json", {"metrics": {"t/o/m": {"noise_pct": -1}}}),
    ("compare.schema.json", [{"scenario": "s"}]),
])
def test_a_wrong_document_is_refused(name: str, instance: Any) -> None:
    assert errors(name, instance)


def test_the_docs_publish_every_schema() -> None:
    page = (DOCS / "machine-output.md").read_text()
    for name, (title, _, _) in SCHEMAS.items():
        assert f"(schemas/{name})" in page and f"`{title}`" in page, name
    assert (DOCS / "schemas").resolve() == DIRECTORY.resolve()


def test_a_row_written_today_has_every_column_and_validates() -> None:
    from vnetbench.core.outcome import State
    from vnetbench.core.schema import COLUMNS, ResultRow

    row = ResultRow("r1", "throughput", "wireguard", "default", "", 1, "tcp_mbit", 812.5,
                    "Mbit/s", State.OK, "ok", "", settings={"seconds": 10},
                    parameters={"round": 3}, interval_s=1.0,
                    dimensions={"role": "agent"}).record()
    assert set(COLUMNS) <= set(row)
    assert not errors("results.schema.json", row)
    assert errors("results.schema.json", {**row, "state": "fine"})
