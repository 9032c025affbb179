"""docs/reference/: the command pages are what `python -m vnetbench.generators.docsgen` writes from
the CLI, and each names every option `--help` prints; a changed help fails here until
the pages are regenerated."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vnetbench.cli import app
from vnetbench.declared import DECLARATIONS, DECLARED
from vnetbench.generators import docsgen

ROOT = Path(__file__).resolve().parents[3]
REGENERATE = "run `python -m vnetbench.generators.docsgen` and commit the pages it writes"
# an option row of the help box: its first name opens the row
OPTION = re.compile(r"^\W*(--[a-z][a-z0-9-]*)", re.MULTILINE)


def test_the_committed_command_pages_are_the_generated_ones() -> None:
    pages = docsgen.command_pages()
    for path, text in pages.items():
        committed = ROOT / path
        assert committed.is_file(), f"{path} is missing: {REGENERATE}"
        assert committed.read_text() == text, f"{path} differs from the CLI: {REGENERATE}"
    on_disk = {p.relative_to(ROOT) for p in (ROOT / docsgen.COMMANDS_DIR).glob("*.md")}
    assert sorted(on_disk - set(pages)) == [], f"pages of no command: {REGENERATE}"


@pytest.mark.parametrize("path", [path for path, _ in docsgen.commands()],
                         ids=lambda path: " ".join(path))
def test_a_command_page_names_every_option_its_help_prints(path: tuple[str, ...]) -> None:
    """Read against `--help` itself, as a user sees it (wide, no colour)."""
    result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "300",
                                                               "NO_COLOR": "1"})
    assert result.exit_code == 0, result.output
    printed = set(OPTION.findall(result.output))
    assert "--help" in printed
    page = (ROOT / docsgen.COMMANDS_DIR / docsgen.page_name(path)).read_text()
    assert sorted(o for o in printed if f"`{o}`" not in page) == []


def test_a_changed_help_changes_the_page(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison above can fail: the page follows an option's help and default."""
    path = ("run",)
    command = dict(docsgen.commands())[path]
    before = docsgen.command_page(path, command)
    option = next(p for p in command.params if hasattr(p, "is_flag"))
    monkeypatch.setattr(option, "help", "Something else entirely.")
    assert docsgen.command_page(path, command) != before
    assert "Something else entirely." in docsgen.command_page(path, command)


def test_defaults_inside_the_tree_are_written_relative_to_it() -> None:
    """A page does not depend on where the clone lives."""
    run = dict(docsgen.commands())[("run",)]
    page = docsgen.command_page(("run",), run)
    assert "`topologies/two-sites.yml`" in page and str(ROOT) not in page


def test_write_drops_a_page_no_command_has(tmp_path: Path) -> None:
    stale = tmp_path / docsgen.COMMANDS_DIR / "gone.md"
    stale.parent.mkdir(parents=True)
    stale.write_text("old")
    changed = docsgen.write(tmp_path)
    assert not stale.exists() and docsgen.COMMANDS_DIR / "gone.md" in changed
    assert (tmp_path / docsgen.COMMANDS_DIR / "run.md").is_file()
    assert docsgen.write(tmp_path) == []


def test_each_scenario_page_holds_its_declaration_as_generated() -> None:
    """docs/reference/scenarios/NAME.md: the prose is kept, the declared part is the
    declaration's (every setting and metric named)."""
    for path, text in docsgen.scenario_pages().items():
        committed = ROOT / path
        assert committed.is_file(), f"{path} is missing: {REGENERATE}"
        assert committed.read_text() == text, f"{path}'s declared part differs: {REGENERATE}"
    on_disk = {p.stem for p in (ROOT / docsgen.SCENARIOS_DIR).glob("*.md")}
    assert on_disk == {d.name for d in DECLARATIONS}, "a page per scenario, no other"


def test_a_scenario_page_names_every_setting_and_metric() -> None:
    room = DECLARED["room"]
    block = docsgen.scenario_reference(room)
    assert room.settings is not None
    for field in room.settings.model_fields:
        assert f"`{room.settings.flat_name(field)}`" in block
    assert all(f"`{m.display or m.name}`" in block for m in room.metrics)


def test_the_generated_part_is_replaced_and_the_prose_kept(tmp_path: Path) -> None:
    page = tmp_path / docsgen.SCENARIOS_DIR / "room.md"
    page.parent.mkdir(parents=True)
    page.write_text(f"# room\n\nProse.\n\n{docsgen.BEGIN}\nstale\n{docsgen.END}\n\nAfter.\n")
    text = docsgen.scenario_pages(tmp_path)[docsgen.SCENARIOS_DIR / "room.md"]
    assert text.startswith("# room\n\nProse.\n\n") and text.endswith("\n\nAfter.\n")
    assert "stale" not in text and "`room_rate`" in text
