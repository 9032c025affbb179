"""The strict loader still reads what a user may rightly write."""

from pathlib import Path

import pytest
import yaml

from vnetbench.core.yamlfile import YamlRefused, load_yaml

ROOT = Path(__file__).parents[3]


def test_a_merge_key_may_be_overridden_and_aliases_shared() -> None:
    text = "base: &b {rate: 1mbit, loss: 1%}\nsite: {<<: *b, loss: 2%}\nother: *b\n"
    assert load_yaml(text) == {"base": {"rate": "1mbit", "loss": "1%"},
                               "site": {"rate": "1mbit", "loss": "2%"},
                               "other": {"rate": "1mbit", "loss": "1%"}}


def test_the_same_key_in_two_mappings_is_no_duplicate() -> None:
    assert load_yaml("a: {x: 1}\nb: {x: 2}\n") == {"a": {"x": 1}, "b": {"x": 2}}


def test_a_key_spelled_two_ways_is_one_key() -> None:
    with pytest.raises(YamlRefused, match="given twice"):
        load_yaml("1: a\n0x1: b\n")


@pytest.mark.parametrize("path", sorted(
    [*ROOT.glob("topologies/*.yml"), *ROOT.glob("vnetbench/**/*.yml"),
     *ROOT.glob("docs/**/*.yml")]), ids=str)
def test_every_shipped_yaml_file_reads_as_before(path: Path) -> None:
    text = path.read_text()
    assert load_yaml(text) == yaml.safe_load(text)
