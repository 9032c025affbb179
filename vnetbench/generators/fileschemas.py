"""JSON Schemas (draft 2020-12) of every file and document vnetbench writes for others
to read, shipped under vnetbench/data/schemas/ and published in docs/machine-output.md.

Generated, never edited by hand: from the pydantic model where a file is written from
one (run.json: RunRecord; calibration.json's figures: Figure), from the declared
columns where it is a table (results.parquet: vnetbench/core/schema.py; verdicts.csv:
report/ab.py's VERDICT_COLUMNS), and declared here for the documents built as dicts
(noise.json, history's and compare's JSON), and from vnetbench/commands/documents.py's
models for the result documents of run, matrix, sweep, capacity, calibrate and
doctor. A table's schema is that of one row, its columns as the typed file
(parquet) holds them; the CSV copies have the same columns.
The schemas describe the files of every format still read: a key or column added
since is optional. `python -m vnetbench.generators.fileschemas` writes them again; a unit test
fails when the shipped files, the docs or the real recorded outputs disagree.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, TypeAdapter

from vnetbench.core import schema as columns
from vnetbench.core.outcome import State

DIRECTORY = Path(__file__).parents[1] / "data" / "schemas"
DRAFT = "https://json-schema.org/draft/2020-12/schema"
Schema = dict[str, Any]

STRING: Schema = {"type": "string"}
NUMBER_OR_NULL: Schema = {"type": ["number", "null"]}  # JSON has no nan: null
INTEGER: Schema = {"type": "integer", "minimum": 0}


def described(schema: Schema, name: str, title: str, description: str) -> Schema:
    """The schema with its identity first: $schema, $id (its file name), title."""
    return {"$schema": DRAFT, "$id": name, "title": title, "description": description,
            **{k: v for k, v in schema.items() if k not in ("title", "description")}}


def results_schema() -> Schema:
    """One row of results.parquet (and results.csv)."""
    always = (columns.RUN_ID, columns.SCENARIO, columns.OVERLAY, columns.VARIANT,
              columns.PASS, columns.METRIC, columns.VALUE, columns.UNIT, columns.STATUS)
    properties: Schema = {name: STRING for name in columns.COLUMNS}
    properties |= {
        columns.PASS: {"type": "integer", "minimum": 1,
                       "description": "the pass, from 1 (0 in a few older files: a setup row)"},
        columns.VALUE: {**NUMBER_OR_NULL, "description": "null: nothing measured (see state)"},
        columns.STATE: {"enum": [s.value for s in State],
                        "description": "what code reads; absent in the oldest files"},
        columns.STATUS: {**STRING, "description": "the sentence people read"},
        columns.KINDS: {**STRING, "description": "what code reads of the status: its "
                        "problems' kinds (outcome.Kind), comma-separated in the order "
                        "said; absent in older files"},
        columns.INTERVAL_S: {**NUMBER_OR_NULL, "description": "a time series' point: "
                             "seconds since the measurement began (null: the pass's own "
                             "value); the column exists only where a scenario kept a series"},
    }
    for dimension in columns.DIMENSIONS:
        properties[dimension] = {**STRING, "description": "a dimension; empty where the "
                                 "metric has none"}
    return {"type": "object", "required": list(always), "properties": properties,
            "patternProperties": {
                f"^{columns.SETTING_PREFIX}": {"description": "a setting that shaped the "
                                               "row's numbers"},
                f"^{columns.PARAMETER_PREFIX}": {"description": "a parameter of the row's "
                                                 "variant (a matrix cell's override, a "
                                                 "sweep's value, an A/B's round)"}},
            "additionalProperties": False}


def events_schema() -> Schema:
    """One row of a run's logs/events.parquet (measure/events.py's write_events)."""
    from vnetbench.measure.events import COLUMNS

    said = {"time": "when the container logged the line (UTC; null: its log had no "
                    "timestamps); a timestamp column in the parquet file",
            "container": "the container's name", "role": "the topology's role of it",
            "process": "the pool member that wrote the line, else the container's node",
            "event": "the name of the overlay's pattern that matched (vNet: its profile's "
                     "events)",
            "fields": "the pattern's named groups, as the text of a JSON object (their "
                      "keys differ per event)",
            "line": "the log line, without Docker's timestamp"}
    properties: Schema = {name: {**STRING, "description": said[name]} for name in COLUMNS}
    properties["time"] = {"type": ["string", "null"], "format": "date-time",
                          "description": said["time"]}
    return {"type": "object", "required": list(COLUMNS), "properties": properties,
            "additionalProperties": False}


def run_schema() -> Schema:
    from vnetbench.analysis.runrecord import RunRecord

    # validation mode: the serializer only leaves out keys nobody set, and a
    # wrap serializer hides the fields from the serialization schema
    return RunRecord.model_json_schema(mode="validation")


def verdicts_schema() -> Schema:
    """One row of an A/B's verdicts.csv."""
    from vnetbench.report.ab import VERDICT_COLUMNS

    properties: Schema = {name: NUMBER_OR_NULL for name in VERDICT_COLUMNS}
    properties |= {"scenario": STRING, "metric": STRING, "unit": STRING,
                   "pairs": INTEGER, "rounds": INTEGER, "judged": {"type": "boolean"},
                   "verdict": STRING, "reason": {"type": ["string", "null"]}}
    return {"type": "object", "required": list(VERDICT_COLUMNS), "properties": properties,
            "additionalProperties": False}


def ab_schema() -> Schema:
    """What `ab --json` prints: verdicts.csv's rows."""
    return {"type": "array", "items": verdicts_schema()}


def noise_schema() -> Schema:
    """An A/A's noise.json (report/ab.py's noise_record)."""
    entry = {"type": "object", "required": ["noise_pct"],
             "properties": {"noise_pct": {"type": "number", "minimum": 0},
                            "pairs": INTEGER, "unit": STRING}}
    return {"type": "object", "required": ["metrics"],
            "properties": {
                "measured": {"type": ["string", "null"], "description": "when (ISO 8601)"},
                "machine": {"type": "object"}, "rounds": {"type": ["integer", "null"]},
                "spec": {"type": "array", "description": "the A arm's settings"},
                "metrics": {"type": "object", "description": "SCENARIO/OVERLAY/METRIC -> "
                            "its noise floor", "additionalProperties": entry}}}


def compare_schema() -> Schema:
    """What `compare --json` prints: one object per metric compared."""
    row = {"type": "object",
           "required": ["scenario", "overlay", "variant", "metric", "unit", "old_n", "new_n",
                        "ratio", "ci_low", "ci_high", "noise_pct", "verdict", "reason"],
           "properties": {
               **{k: STRING for k in ("scenario", "overlay", "variant", "metric", "unit",
                                      "verdict", "reason")},
               "old_n": INTEGER, "new_n": INTEGER, "ratio": NUMBER_OR_NULL,
               "ci_low": NUMBER_OR_NULL, "ci_high": NUMBER_OR_NULL,
               "noise_pct": NUMBER_OR_NULL}, "additionalProperties": False}
    return {"type": "array", "items": row}


def history_schema() -> Schema:
    """What `history --json` prints (report/history_changes.py's history_json)."""
    point = {"type": "object", "required": ["label", "position", "n", "mean"],
             "properties": {"label": STRING, "position": INTEGER, "n": INTEGER,
                            "mean": NUMBER_OR_NULL, "low": NUMBER_OR_NULL,
                            "high": NUMBER_OR_NULL}}
    change = {"type": "object", "required": ["label", "position", "change_pct", "p",
                                             "direction"],
              "properties": {"label": STRING, "position": INTEGER, "before": NUMBER_OR_NULL,
                             "after": NUMBER_OR_NULL, "change_pct": NUMBER_OR_NULL,
                             "p": NUMBER_OR_NULL,
                             "direction": {"enum": ["better", "worse", "-"]}}}
    series = {"type": "object",
              "required": ["scenario", "overlay", "variant", "metric", "unit", "floor_pct",
                           "floor_from", "points", "change_points"],
              "properties": {
                  **{k: STRING for k in ("scenario", "overlay", "variant", "metric", "unit")},
                  "floor_pct": {"type": "number", "minimum": 0},
                  "floor_from": {"enum": ["noise.json", "default"]},
                  "points": {"type": "array", "items": point},
                  "change_points": {"type": "array", "items": change}}}
    directory = {"type": "object", "required": ["label", "directory", "started"],
                 "properties": {"label": STRING, "directory": STRING, "started": STRING}}
    return {"type": "object",
            "required": ["page", "directories", "noise_floor", "default_floor_pct", "method",
                         "series"],
            "properties": {
                "page": {**STRING, "description": "history.html's path"},
                "directories": {"type": "array", "items": directory},
                "noise_floor": STRING, "default_floor_pct": {"type": "number"},
                "method": {"type": "object", "required": ["name"]},
                "series": {"type": "array", "items": series}}}


def document_schema(name: str) -> Callable[[], Schema]:
    """A result document's (vnetbench/commands/documents.py), as it is printed: serialization
    mode, so the values computed from the record (a target's text, met) are in it."""

    def make() -> Schema:
        from vnetbench.commands import documents

        model: type[BaseModel] = getattr(documents, name)
        return model.model_json_schema(mode="serialization")
    return make


def calibration_schema() -> Schema:
    """`calibrate`'s calibration.json: its figures, every round of the two-router
    paths, and at scale the breakdowns."""
    from vnetbench.runs.targets import Figure, PathRound

    figure = TypeAdapter(Figure).json_schema(mode="serialization")
    figure.pop("title", None)
    path_round = TypeAdapter(PathRound).json_schema(mode="serialization")
    path_round.pop("title", None)
    return {"type": "object", "required": ["figures"],
            "properties": {"figures": {"type": "array", "items": figure},
                           "path_rounds": {"type": "array", "items": path_round},
                           "breakdown": {"type": "object"},
                           "engine_floor": {"type": "array"}}}


# file name -> (what it describes, where it is, its generator)
SCHEMAS: dict[str, tuple[str, str, Callable[[], Schema]]] = {
    "results.schema.json": ("results.parquet", "One row of results.parquet and results.csv "
                            "(every results directory).", results_schema),
    "run.schema.json": ("run.json", "run.json: what ran, where, with what, and how it "
                        "ended (every results and run directory).", run_schema),
    "verdicts.schema.json": ("verdicts.csv", "One row of an A/B's verdicts.csv.",
                             verdicts_schema),
    "noise.schema.json": ("noise.json", "An A/A's noise floor per metric.", noise_schema),
    "events.schema.json": ("events.parquet", "One row of a run's logs/events.parquet: an "
                           "event an overlay's log pattern found.", events_schema),
    "ab.schema.json": ("ab --json", "The document ab --json prints (--json-file writes): "
                       "verdicts.csv's rows.", ab_schema),
    "compare.schema.json": ("compare --json", "The document compare --json prints "
                            "(--json-file writes).", compare_schema),
    "history.schema.json": ("history --json", "The document history --json prints "
                            "(--json-file writes).", history_schema),
    "calibration.schema.json": ("calibration.json", "calibrate's figures and targets.",
                                calibration_schema),
    "run-result.schema.json": ("run --json", "The document run --json prints (--json-file "
                               "writes), and matrix's and sweep's.",
                               document_schema("MeasuredDocument")),
    "capacity.schema.json": ("capacity --json", "The document capacity --json prints "
                             "(--json-file writes).", document_schema("CapacityDocument")),
    "calibrate.schema.json": ("calibrate --json", "The document calibrate --json prints "
                              "(--json-file writes).",
                              document_schema("CalibrationDocument")),
    "doctor.schema.json": ("doctor --json", "The document doctor --json prints "
                           "(--json-file writes).", document_schema("DoctorDocument")),
}


def generated(name: str) -> Schema:
    title, description, make = SCHEMAS[name]
    return described(make(), name, title, description)


def text(schema: Schema) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def shipped(name: str) -> Schema:
    loaded: Schema = json.loads((DIRECTORY / name).read_text())
    return loaded


def write_all(directory: Path = DIRECTORY) -> None:
    from vnetbench.files import write_text_atomic

    directory.mkdir(parents=True, exist_ok=True)
    for name in SCHEMAS:
        write_text_atomic(directory / name, text(generated(name)))


if __name__ == "__main__":
    write_all()
