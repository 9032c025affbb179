"""`vnetbench completion SHELL`: typer's script, and the completion it calls back."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from vnetbench.cli import app

runner = CliRunner()


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish", "powershell"])
def test_completion_prints_the_shells_script(shell: str) -> None:
    result = runner.invoke(app, ["completion", shell])
    assert result.exit_code == 0, result.output
    assert "_VNETBENCH_COMPLETE" in result.stdout and "vnetbench" in result.stdout


def test_completion_of_an_unknown_shell_is_refused_in_one_paragraph() -> None:
    result = runner.invoke(app, ["completion", "tcsh"])
    assert result.exit_code == 2
    assert "'tcsh' is not one of 'bash', 'zsh', 'fish', 'powershell'" in result.output


def test_the_script_s_callback_completes_commands_and_options() -> None:
    def complete(words: str) -> list[str]:
        result = runner.invoke(app, [], prog_name="vnetbench", env={
            "_VNETBENCH_COMPLETE": "complete_bash", "COMP_WORDS": words,
            "COMP_CWORD": str(len(words.split()) - 1)})
        return result.stdout.split()

    assert {"compare", "completion"} <= set(complete("vnetbench com"))
    assert {"--json", "--json-file"} <= set(complete("vnetbench compare --js"))
