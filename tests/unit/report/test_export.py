"""`vnetbench export` on a recorded results directory, each file validated against
the format its dashboard documents, written down here as a JSON Schema:

- github-action-benchmark, tools customBiggerIsBetter / customSmallerIsBetter (its
  README: "Every entry in the JSON file you provide only needs to provide name,
  unit, and value. You can also provide optional range ... and extra"; its parser,
  src/extract.ts: name, unit, range, extra strings, value a number, an array).
- Bencher Metric Format (bencher.dev/docs/reference/bencher-metric-format: the
  schema printed there, plus its stated limits: a measure's slug at most 64
  characters, a benchmark's name at most 1024).
"""

import json
from collections.abc import Callable
from pathlib import Path

import jsonschema
import pandas as pd
import pytest
from typer.testing import CliRunner

from vnetbench.analysis.results import load_results
from vnetbench.cli import app
from vnetbench.report.tables import summary_table

runner = CliRunner()

GITHUB_CUSTOM = {
    "$schema": "http://json-schema.org/draft-07/schema",
    "type": "array",
    "minItems": 1,  # the action fails on a file with no benchmark in it
    "items": {
        "type": "object",
        "properties": {"name": {"type": "string"}, "unit": {"type": "string"},
                       "value": {"type": "number"}, "range": {"type": "string"},
                       "extra": {"type": "string"}},
        "required": ["name", "unit", "value"],
    },
}
MEASURE = {"type": "object", "properties": {"value": {"type": "number"},
                                            "lower_value": {"type": "number"},
                                            "upper_value": {"type": "number"}},
           "required": ["value"]}
BMF = {
    "$id": "https://bencher.dev/bmf.json",
    "$schema": "http://json-schema.org/draft-07/schema",
    "type": "object",
    "propertyNames": {"maxLength": 1024},
    "patternProperties": {".+": {"type": "object", "propertyNames": {"maxLength": 64},
                                 "patternProperties": {".+": MEASURE}}},
}


def export(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["export", *args])
    return result.exit_code, result.output


def means(directory: Path) -> dict[str, float]:
    summary = summary_table(load_results(directory))
    return {f"{r.scenario}/{r.overlay}/{r.variant}/{r.metric}": float(r.mean)
            for r in summary.itertuples()}


def test_github_one_file_per_direction(data_copy: Callable[[str], Path], tmp_path: Path) -> None:
    directory = data_copy("results-quick")
    code, output = export(str(directory), "--format", "github", "-o", str(tmp_path / "b.json"))
    assert code == 0, output
    bigger = json.loads((tmp_path / "b-bigger-is-better.json").read_text())
    smaller = json.loads((tmp_path / "b-smaller-is-better.json").read_text())
    for document in (bigger, smaller):
        jsonschema.validate(document, GITHUB_CUSTOM)
    assert "customBiggerIsBetter: " + str(tmp_path / "b-bigger-is-better.json") in output
    assert {e["name"].rsplit("/", 1)[1] for e in bigger} == {"tcp_mbit", "ping_received"}
    assert {e["name"].rsplit("/", 1)[1] for e in smaller} == {"rtt_min_ms", "ping_loss"}
    expected = means(directory)
    tcp = next(e for e in bigger if e["name"] == "throughput/baseline/default/tcp_mbit")
    assert tcp["value"] == pytest.approx(expected[tcp["name"]]) and tcp["unit"] == "Mbit/s"
    assert "mean of 3 passes" in tcp["extra"]


def test_noisy_metrics_only_with_all(data_copy: Callable[[str], Path]) -> None:
    directory = data_copy("results-quick")
    assert export(str(directory), "--format", "github", "--all")[0] == 0
    smaller = json.loads((directory / "github-smaller-is-better.json").read_text())
    names = {e["name"].rsplit("/", 1)[1] for e in smaller}
    assert {"tcp_retransmits", "rtt_mdev_ms", "rtt_mean_ms"} <= names  # noisy: --all only
    assert "tcp_bytes" not in names and "ping_sent" not in names  # neither way is better


def test_bencher_metric_format(data_copy: Callable[[str], Path]) -> None:
    directory = data_copy("results-quick")
    code, output = export(str(directory), "--format", "bencher")
    assert code == 0, output
    document = json.loads((directory / "bencher.json").read_text())
    jsonschema.validate(document, BMF)
    tcp = document["throughput/baseline/default"]["tcp-mbit"]
    frame = load_results(directory)
    passes = frame[frame["metric"] == "tcp_mbit"]["value"]
    assert (tcp["lower_value"], tcp["upper_value"]) == (passes.min(), passes.max())
    assert tcp["value"] == pytest.approx(passes.mean())
    assert "--threshold-measure tcp-mbit --threshold-lower-boundary" in output
    assert "--threshold-measure rtt-min-ms --threshold-upper-boundary" in output
    assert "rtt-mean-ms" not in output  # declared noisy: exported with --all only


def test_bencher_to_stdout(data_copy: Callable[[str], Path]) -> None:
    directory = data_copy("results-quick")
    result = CliRunner().invoke(app, ["export", str(directory), "--format", "bencher",
                                      "-o", "-"])
    assert result.exit_code == 0
    jsonschema.validate(json.loads(result.stdout), BMF)
    assert not (directory / "bencher.json").exists()


def test_the_schemas_refuse_what_the_formats_do() -> None:
    """The schemas hold something: a value as a string, a slug too long."""
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate([{"name": "x", "unit": "s", "value": "1"}], GITHUB_CUSTOM)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"b": {"m" * 65: {"value": 1.0}}}, BMF)


@pytest.mark.parametrize(("args", "said"), [
    (["--format", "github", "-o", "-"], "writes two files"),
    (["--format", "csv"], "'csv' is not one of"),
])
def test_bad_input_exit_2(data_copy: Callable[[str], Path], args: list[str], said: str) -> None:
    code, output = export(str(data_copy("results-quick")), *args)
    assert code == 2 and said in output, output


def test_nothing_to_export_is_said(tmp_path: Path, data_copy: Callable[[str], Path]) -> None:
    code, output = export(str(tmp_path), "--format", "bencher")
    assert code == 2 and "holds no results.parquet" in output
    directory = data_copy("results-quick")
    frame = pd.read_parquet(directory / "results.parquet")
    frame[frame["metric"] == "tcp_bytes"].to_parquet(directory / "results.parquet")
    code, output = export(str(directory), "--format", "github")
    assert code == 2 and "no measured metric with a direction" in output
