"""The vnetbench command line (Typer): the app, its sub-apps and the registration of
each command, which lives in its own module under vnetbench/commands/ (as
containerlab's cmd/deploy.go, cmd/destroy.go). Nothing else belongs here."""

from __future__ import annotations

import typer
from typer._completion_classes import completion_init

from vnetbench.commands import (
    ab,
    calibrate,
    capacity,
    clean,
    compare,
    completion,
    cost,
    doctor,
    down,
    export,
    history,
    images,
    matrix,
    methods,
    render,
    report,
    root,
    run,
    shape,
    swarm,
    sweep,
    up,
    validate,
    version,
)
from vnetbench.commands.common import OnceOnlyCommand, OneParagraphUsage
from vnetbench.terminal.exitstatus import help_epilog

app = typer.Typer(
    cls=OneParagraphUsage,
    help="Containerised benchmark testbed for overlay networks (vNet first).",
    epilog=help_epilog(),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)
app.callback()(root.root)
# `vnetbench completion SHELL` prints typer's script; what it calls back answers with
# typer's completion classes, registered here (add_completion would add them with
# --install-completion, which edits the user's shell start-up files)
completion_init()
images_app = typer.Typer(help="Build the project's images.", no_args_is_help=True)
app.add_typer(images_app, name="images")
swarm_app = typer.Typer(help="A test Docker Swarm on this machine (Docker-in-Docker nodes).",
                        no_args_is_help=True)
app.add_typer(swarm_app, name="swarm")

for command in (validate.validate, render.render, run.run, methods.methods, sweep.sweep,
                capacity.capacity, cost.cost, shape.shape, matrix.matrix, report.report,
                history.history, export.export, compare.compare, ab.ab, up.up, down.down,
                calibrate.calibrate, clean.clean, doctor.doctor, version.version,
                completion.completion):
    app.command(cls=OnceOnlyCommand)(command)
images_app.command("build", cls=OnceOnlyCommand)(images.build)
images_app.command("vnet", cls=OnceOnlyCommand)(images.vnet)
swarm_app.command("up", cls=OnceOnlyCommand)(swarm.up)
swarm_app.command("down", cls=OnceOnlyCommand)(swarm.down)
