"""Files a user keeps (results, run.json, reports, plots, verdicts, the noise floor,
exports, raw tool output, logs): written whole or not at all, with the umask's mode.

One writer for all of them: a new file beside the old one, filled, fsynced and
renamed over it, so a kill or a full disk mid-write leaves the previous file or
none, never part of one. It is created with mode 0666, which the kernel narrows
by the umask as for any new file (tempfile.mkstemp's 0600 would make results on
a shared lab machine unreadable to a colleague whatever the umask allows).
"""

from __future__ import annotations

import os
import re
import secrets
import stat
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd


def write_atomic(path: Path, write: Callable[[Path], object]) -> None:
    """`write(temp)` fills a new file beside path, which then replaces path whole,
    with the mode a new file gets here (0666 less the umask)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        os.close(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        mode = stat.S_IMODE(temp.stat().st_mode)
        write(temp)
        temp.chmod(mode)  # whatever `write` did to the file, the umask's mode
        with temp.open("rb") as written:
            os.fsync(written.fileno())
        temp.replace(path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    sync_directory(path.parent)


def sync_directory(directory: Path) -> None:
    """The rename itself on disk (a directory's entries are its content)."""
    handle = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(handle)
    finally:
        os.close(handle)


def write_text_atomic(path: Path, text: str) -> None:
    """As UTF-8 whatever the locale, a name's undecodable byte escaped (as printed)."""
    write_atomic(path, lambda temp: temp.write_text(escape_surrogates(text), encoding="utf-8"))


SURROGATE = re.compile("[\ud800-\udfff]")


def escape_surrogates(text: str) -> str:
    """Surrogates as escapes: an undecodable byte (surrogateescape's U+DC80-U+DCFF) as
    '\\xff', any other lone surrogate as '\\ud800'; every other character kept."""

    def escaped(match: re.Match[str]) -> str:
        code = ord(match.group())
        return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"

    return SURROGATE.sub(escaped, text)


KEPT_READ_LIMIT = 1 << 30  # bytes: far above any file vnetbench keeps (1 GiB)


def read_kept(path: Path) -> bytes:
    """A kept file read back: only a regular file of at most KEPT_READ_LIMIT bytes.
    A FIFO in its place would block the reader for ever, and /dev/zero (or any device)
    fill its memory; an OSError names why it cannot be read."""
    info = path.stat()
    if not stat.S_ISREG(info.st_mode):
        raise OSError(f"it is not a regular file ({stat.filemode(info.st_mode)[0]!r} in "
                      "ls -l): a FIFO or a device in its place")
    if info.st_size > KEPT_READ_LIMIT:
        raise OSError(f"{info.st_size} bytes, more than any file vnetbench writes")
    with path.open("rb") as kept:
        return kept.read(KEPT_READ_LIMIT + 1)


def write_parquet(frame: pd.DataFrame, path: Path) -> None:
    """Through a Python file: Arrow takes a path as UTF-8 text and refuses one holding
    a byte no UTF-8 decodes (argv's surrogate), which the file system and open take."""
    with path.open("wb") as parquet:
        frame.to_parquet(parquet, index=False)
