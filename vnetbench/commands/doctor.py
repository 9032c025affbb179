"""`vnetbench doctor`: check what the testbed needs of this machine."""

from __future__ import annotations

import typer
from rich.table import Table
from rich.text import Text

from vnetbench.commands.common import guarded
from vnetbench.terminal.exitstatus import ExitStatus
from vnetbench.terminal.ui import out_console


@guarded
def doctor() -> None:
    """Check the engine, Compose v2, /dev/net/tun, kernel features and images (exit 3
    when not ready)."""
    from vnetbench.deploy.doctor import diagnose
    from vnetbench.engines import local

    checks, verdict_ok = diagnose(local())
    table = Table("check", "state", "detail")
    for name, ok, detail in checks:
        table.add_row(name, Text("ok", "green") if ok else Text("missing", "red"), detail)
    out_console.print(table)
    out_console.print("verdict: ready" if verdict_ok else "verdict: NOT ready (see above)")
    if not verdict_ok:  # the machine is not ready: the environment's status
        raise typer.Exit(ExitStatus.ENVIRONMENT)

