"""Where a command writes, checked against what it reads before anything is written
or the engine is asked: an output never replaces an input, nor lies inside one.

Paths are compared resolved (symbolic links followed, `..` taken out), so a link or
a `DIR/../DIR` spelling cannot hide that an output is an input. An output file may
lie inside an input directory only when it is one the command writes there by design
(`ours`: report.md in the results directory report reads, export's default files):
any other path inside an input, or an input itself, is refused in one paragraph.
A directory in the way of an output file, or a file in the way of an output
directory, is refused the same way (not a traceback once half the work is done).
"""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from vnetbench.errors import UserError

TEMP_NAME_EXTRA = 14  # write_atomic's temporary ".NAME.1234abcd.tmp" beside the file


@dataclass(frozen=True)
class Output:
    """A path a command writes: a file (written whole), or a directory it writes into."""

    option: str  # the option naming it ("--json", "-o", "--out"); "" for a fixed file
    path: Path
    directory: bool = False
    ours: bool = False  # a file the command writes inside the directory it reads
    must_exist: bool = False  # its parent directory must exist (a file's)
    default: bool = False  # the option was not given: its default path

    def named(self, command: str) -> str:
        if not self.option:
            return f"{command}: {self.path}"
        return f"{command} {self.option} {self.path}{' (its default)' if self.default else ''}"


@dataclass(frozen=True)
class Input:
    """A file or directory a command reads."""

    what: str  # "results directory OLD", "--topology"
    path: Path


def resolved(path: Path) -> Path:
    """The path with every link and `..` taken out (its missing tail as it is)."""
    try:
        return Path(os.path.realpath(path))
    except (OSError, ValueError):
        return Path(os.path.abspath(path))


def check_outputs(command: str, outputs: Iterable[Output], inputs: Iterable[Input]) -> None:
    """Each output checked against the command's inputs and the file system: a
    UserError (one paragraph, exit 2) for the first that cannot be written."""
    read = [(item, resolved(item.path)) for item in inputs]
    for output in outputs:
        problem = in_the_way(output)
        if problem:
            raise UserError(f"{output.named(command)}: {problem}. {fix_in_the_way(output)}")
        item, problem = clobbers(output, read, command)
        if item is not None:
            raise UserError(f"{output.named(command)}: {problem}. {fix(output, item)}")


def in_the_way(output: Output) -> str:
    """What in the file system stops this output being written ('' when nothing)."""
    path = output.path
    if not output.directory and (not path.name or path.name in (".", "..")):
        return "it is a directory, not a file"
    longest = name_max(path) - (0 if output.directory else TEMP_NAME_EXTRA)
    if len(os.fsencode(path.name)) > longest:
        return f"its name is longer than this file system allows ({longest} bytes at most)"
    try:
        return kind_in_the_way(output)
    except OSError as error:
        return f"it cannot be looked at ({error.strerror or error})"


def kind_in_the_way(output: Output) -> str:
    path = output.path
    if loops(path):  # is_dir() and exists() say False, and a write would replace the link
        where = "it is" if path.is_symlink() else "it lies under"
        return f"{where} a symbolic link that leads back to itself (a loop)"
    if output.directory and path.exists() and not path.is_dir():
        return "it names a file, not a directory: vnetbench cannot write into it"
    if not output.directory and path.is_dir():
        return "it is a directory, not a file"
    for parent in path.parents:
        if parent.exists() and not parent.is_dir():
            return f"{parent} is a file, not a directory"
    if output.must_exist and not output.directory and not path.parent.is_dir():
        return f"there is no directory {path.parent}"
    if not output.directory and path.parent.is_dir():
        return unwritable(path.parent)
    return ""


def loops(path: Path) -> bool:
    """The path is a symbolic link whose chain of links never ends."""
    try:
        os.stat(path)
    except OSError as error:
        return error.errno == errno.ELOOP
    return False


def unwritable(directory: Path) -> str:
    """Why no file can be made in directory (/proc, a read-only mount, a full disk), ''
    when one can: tried, since permissions alone do not tell (root passes them all)."""
    try:
        with tempfile.NamedTemporaryFile(dir=directory, prefix=".vnetbench-write-test"):
            return ""
    except OSError as error:
        return f"{directory} cannot be written ({error.strerror or error})"


def name_max(path: Path) -> int:
    """The longest file name the file system holding path takes (255 if unknown)."""
    try:
        existing = next((p for p in path.absolute().parents if p.is_dir()), Path("/"))
        return os.pathconf(existing, "PC_NAME_MAX")
    except (OSError, ValueError):
        return 255


def clobbers(output: Output, read: list[tuple[Input, Path]],
             command: str) -> tuple[Input | None, str]:
    """The input this output would replace or write into, and how (None when none)."""
    where = resolved(output.path)
    for item, path in read:
        shown = "" if path == item.path else f" ({path})"
        if where == path:
            return item, (f"it is {item.what}{shown}, which {command} reads, and {command} "
                          "never writes over what it reads")
        if is_directory(path) and where.is_relative_to(path):
            if output.ours and where == path / output.path.name:
                continue  # the command's own file beside what it reads
            if output.ours:
                return item, (f"it is a link to {where}, inside {item.what}, which "
                              f"{command} reads: writing it would replace that file")
            return item, (f"it lies inside {item.what}{shown}, which {command} reads, and "
                          f"{command} never writes over or into what it reads")
    return None, ""


def is_directory(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:
        return False


def fix_in_the_way(output: Output) -> str:
    if not output.option:
        return "Move what is in the way and run again."
    kind = "a directory (made if missing)" if output.directory else \
        "the name of a file in an existing directory"
    return f"Give {output.option} {kind}, or move what is in the way."


def fix(output: Output, item: Input) -> str:
    if output.ours:
        return ("Its files are written beside what it reads, and this one is a link to "
                "one of them: remove the link and run again.")
    kind = "directory" if output.directory else "file"
    return (f"Give {output.option} a {kind} outside {item.what}"
            + (", or leave the option out" if output.default else "") + ".")


def results_inputs(directories: Iterable[Path], what: str = "results directory") -> list[Input]:
    """Results directories (or roots holding several) as inputs, each named."""
    return [Input(f"{what} {directory}", directory) for directory in directories]
