"""The root's own options: --version, -q/--quiet and -v/--verbose, given before the
command (`vnetbench -q run ...`)."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from vnetbench.commands.version import print_version
from vnetbench.terminal.ui import NORMAL, QUIET, VERBOSE, detail, set_verbosity

OWN_PREFIXES = ("VNETBENCH_", "BENCH_", "DOCKER_HOST")


def root(
    show_version: Annotated[bool, typer.Option(
        "--version", is_eager=True, callback=print_version,
        help="Print vnetbench's version and exit (as 'vnetbench version').")] = False,
    quiet: Annotated[bool, typer.Option(
        "--quiet", "-q", help="Print no progress and no notes on stderr (warnings, errors "
                              "and the results still are).")] = False,
    verbose: Annotated[bool, typer.Option(
        "--verbose", "-v", help="Print more on stderr: each wait as it begins, the "
                                "environment variables in effect.")] = False,
) -> None:
    """The root's options; the app's help is cli.py's."""
    if quiet and verbose:
        raise typer.BadParameter("-q/--quiet and -v/--verbose ask for opposite things: "
                                 "give one of them", param_hint="'--quiet'")
    set_verbosity(QUIET if quiet else VERBOSE if verbose else NORMAL)
    for name, value in sorted(os.environ.items()):  # docs/environment.md: what each does
        if name.startswith(OWN_PREFIXES) and value:
            detail(f"environment: {name}={value}")
