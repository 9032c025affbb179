"""Machine output, one meaning on every command that has a result document: `--json`
writes it to stdout (and nothing else goes there), `--json-file PATH` writes it to a
file, whole. The documents' schemas are published under vnetbench/schemas/
(docs/machine-output.md)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated

import typer

from vnetbench.errors import UserError

JsonToStdout = Annotated[bool, typer.Option(
    "--json", help="Write the result document as JSON to stdout (and nothing else there; "
                   "its schema: docs/machine-output.md).")]
JsonFile = Annotated[Path | None, typer.Option(
    "--json-file", metavar="PATH",
    help="Write the result document as JSON to this file (written whole; never one of "
         "the command's inputs nor a file inside one).")]


def check_json_file(command: str, path: Path | None, inputs: Iterable[Path]) -> None:
    """Refuse, before anything is read or measured, a --json-file that cannot be
    written or that is (or lies inside) one of the command's inputs. (A minimal check
    of its own: vnetbench/outputs.py's check_outputs, where present, does this for
    every output; swap it in here.)"""
    if path is None:
        return
    fix = f"Give --json-file the name of a new file, e.g. --json-file out/{command}.json."
    if path.is_dir() or not path.name or path.name in (".", ".."):
        raise UserError(f"{command} --json-file {path}: it is a directory. {fix}")
    if not path.parent.is_dir():
        raise UserError(f"{command} --json-file {path}: there is no directory "
                        f"{path.parent}. {fix}")
    target = Path(os.path.realpath(path))
    for given in inputs:
        source = Path(os.path.realpath(given))
        if target == source or source in target.parents:
            raise UserError(f"{command} --json-file {path}: it is, or lies inside, the "
                            f"input {given}, which writing it would change. {fix}")


def emit_json(document: str, to_stdout: bool, path: Path | None) -> None:
    """The document to stdout and/or to the file (each ends with a newline)."""
    from vnetbench.files import write_text_atomic

    text = document if document.endswith("\n") else document + "\n"
    if path is not None:
        write_text_atomic(path, text)
    if to_stdout:
        sys.stdout.write(text)
        sys.stdout.flush()
