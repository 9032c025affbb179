"""`vnetbench version`: print vnetbench's version."""

from __future__ import annotations

from vnetbench import __version__
from vnetbench.commands.common import guarded
from vnetbench.ui import out_console


@guarded
def version() -> None:
    """Print vnetbench's version."""
    out_console.print(__version__)

