"""Machine output, one meaning on every command that has a result document: `--json`
writes it to stdout (and nothing else goes there), `--json-file PATH` writes it to a
file, whole. The documents' schemas are published under vnetbench/schemas/
(docs/machine-output.md)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

JsonToStdout = Annotated[bool, typer.Option(
    "--json", help="Write the result document as JSON to stdout (and nothing else there; "
                   "its schema: docs/machine-output.md).")]
JsonFile = Annotated[Path | None, typer.Option(
    "--json-file", metavar="PATH",
    help="Write the result document as JSON to this file (written whole; never one of "
         "the command's inputs nor a file inside one).")]


def emit_json(document: str, to_stdout: bool, path: Path | None) -> None:
    """The document to stdout and/or to the file (each ends with a newline)."""
    from vnetbench.files import write_text_atomic

    text = document if document.endswith("\n") else document + "\n"
    if path is not None:
        write_text_atomic(path, text)
    if to_stdout:
        sys.stdout.write(text)
        sys.stdout.flush()
