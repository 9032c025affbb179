"""`vnetbench completion SHELL`: print the shell's completion script."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer

from vnetbench.commands.common import guarded

PROG = "vnetbench"
COMPLETE_VAR = "_VNETBENCH_COMPLETE"  # Click's name for it: _{PROG}_COMPLETE


class Shell(StrEnum):
    BASH = "bash"
    ZSH = "zsh"
    FISH = "fish"
    POWERSHELL = "powershell"


@guarded
def completion(shell: Annotated[Shell, typer.Argument(
        help="bash, zsh, fish or powershell.")]) -> None:
    """Print the shell's completion script for vnetbench: load it with
    eval "$(vnetbench completion bash)" in ~/.bashrc (zsh: the same in ~/.zshrc; fish:
    vnetbench completion fish | source)."""
    from typer._completion_shared import get_completion_script  # typer's own scripts

    typer.echo(get_completion_script(prog_name=PROG, complete_var=COMPLETE_VAR,
                                     shell=shell.value))
