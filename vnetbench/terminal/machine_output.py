"""Machine output, one meaning on every command that has a result document: `--json`
writes it to stdout (and nothing else goes there), `--json-file PATH` writes it to a
file, whole. The documents' schemas are published under vnetbench/schemas/
(docs/machine-output.md)."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from pydantic import BaseModel

    from vnetbench.terminal.outputs import Input

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


@dataclass(frozen=True)
class JsonWanted:
    """A command's --json and --json-file: where its result document goes, if anywhere."""

    command: str
    to_stdout: bool = False
    path: Path | None = None

    def __bool__(self) -> bool:
        return self.to_stdout or self.path is not None

    def check(self, inputs: Sequence[Input] = ()) -> None:
        """--json-file can be written and is none of the inputs: refused (exit 2) before
        anything starts."""
        from vnetbench.terminal.outputs import Output, check_outputs

        if self.path is not None:
            check_outputs(self.command, [Output("--json-file", self.path, must_exist=True)],
                          inputs)

    def emit(self, document: BaseModel) -> None:
        if self:
            emit_json(document.model_dump_json(indent=2), self.to_stdout, self.path)


@contextmanager
def people_on_stderr(json_on_stdout: bool) -> Iterator[None]:
    """With --json, what vnetbench prints for people (tables, each pass's result line,
    verdicts) goes to stderr for the block, so stdout holds the document alone."""
    from vnetbench.terminal.ui import out_console

    if not json_on_stdout:
        yield
        return
    before = out_console.stderr
    out_console.stderr = True
    try:
        yield
    finally:
        out_console.stderr = before
