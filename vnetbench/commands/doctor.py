"""`vnetbench doctor`: check what the testbed needs of this machine."""

from __future__ import annotations

import typer
from rich.table import Table
from rich.text import Text

from vnetbench.commands.common import guarded
from vnetbench.terminal.exitstatus import ExitStatus
from vnetbench.terminal.machine_output import (
    JsonFile,
    JsonToStdout,
    JsonWanted,
    people_on_stderr,
)
from vnetbench.terminal.ui import out_console


@guarded
def doctor(as_json: JsonToStdout = False, json_file: JsonFile = None) -> None:
    """Check the engine, Compose v2, /dev/net/tun, kernel features and images (exit 3
    when not ready). --json/--json-file: each check and the verdict (the table then
    goes to stderr)."""
    from vnetbench.commands.documents import doctor_document
    from vnetbench.deploy.doctor import diagnose
    from vnetbench.engines import local

    wanted = JsonWanted("doctor", as_json, json_file)
    wanted.check()
    with people_on_stderr(as_json):
        found = diagnose(local())
        status = ExitStatus.OK if found.ready else ExitStatus.ENVIRONMENT
        table = Table("check", "state", "detail")
        for check in found.checks:
            table.add_row(check.name, Text("ok", "green") if check.ok
                          else Text("missing", "red"), check.detail)
        out_console.print(table)
        out_console.print("verdict: ready" if found.ready else "verdict: NOT ready (see above)")
    wanted.emit(doctor_document(found, status))
    if status:  # the machine is not ready: the environment's status
        raise typer.Exit(status)
