"""`vnetbench version`: print vnetbench's version."""

from __future__ import annotations

import typer

from vnetbench import __version__
from vnetbench.commands.common import guarded
from vnetbench.terminal.ui import out_console


@guarded
def version() -> None:
    """Print vnetbench's version."""
    out_console.print(__version__)


def print_version(given: bool) -> None:
    """`vnetbench --version`: the same line as `vnetbench version`, then exit 0."""
    if given:
        out_console.print(__version__)
        raise typer.Exit(0)

