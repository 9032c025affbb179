"""Every file a user keeps is written whole or not at all, with the umask's mode:
the atomic writer itself, and each writer of kept files run on recorded results
(tests/data/results-quick, the A/A tests/data/ab-aa-baseline)."""

from __future__ import annotations

import errno
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vnetbench.analysis.results import CSV, PARQUET, ResultSet, load_results
from vnetbench.analysis.runrecord import RUN_FILE, RunRecord, read_record
from vnetbench.cli import app
from vnetbench.files import write_atomic, write_text_atomic
from vnetbench.measure.probe import save_raw
from vnetbench.report.ab import NOISE_FILE, VERDICTS_FILE, verdict_table, write_verdicts
from vnetbench.report.html import HTML_REPORT, build_html
from vnetbench.report.markdown import REPORT, build_report
from vnetbench.report.plots import write_plots
from vnetbench.report.tables import summary_table

OLD = "the previous, whole copy\n"


@pytest.fixture
def umask() -> Iterator[Callable[[int], None]]:
    """Set the process's umask for the test; the one before is restored after."""
    before = os.umask(0o022)
    os.umask(before)
    yield os.umask
    os.umask(before)


@pytest.mark.parametrize(("mask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_a_kept_file_gets_the_umasks_mode(tmp_path: Path, umask: Callable[[int], None],
                                          mask: int, mode: int) -> None:
    umask(mask)
    path = tmp_path / "report.md"
    path.write_text(OLD)
    path.chmod(0o600)  # replacing a file gives the umask's mode, not the old file's
    write_text_atomic(path, "new\n")
    assert (path.read_text(), path.stat().st_mode & 0o777) == ("new\n", mode)
    write_atomic(tmp_path / "new.csv", lambda temp: temp.write_text("a,b\n"))
    assert (tmp_path / "new.csv").stat().st_mode & 0o777 == mode


def test_a_writer_that_changes_the_mode_still_leaves_the_umasks(
        tmp_path: Path, umask: Callable[[int], None]) -> None:
    umask(0o022)
    path = tmp_path / "plot.png"

    def private(temp: Path) -> None:
        temp.write_bytes(b"png")
        temp.chmod(0o600)

    write_atomic(path, private)
    assert path.stat().st_mode & 0o777 == 0o644


@pytest.mark.parametrize("existed", [True, False])
def test_a_failure_mid_write_leaves_the_old_file_or_none(tmp_path: Path,
                                                         existed: bool) -> None:
    path = tmp_path / "verdicts.csv"
    if existed:
        path.write_text(OLD)

    def half_then_full_disk(temp: Path) -> None:
        with temp.open("w") as handle:
            handle.write("metric,verdict\ntcp_mbit,wor")
            handle.flush()
            raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(OSError, match="No space"):
        write_atomic(path, half_then_full_disk)
    assert [p.name for p in tmp_path.iterdir()] == (["verdicts.csv"] if existed else [])
    if existed:
        assert path.read_text() == OLD


def fail_fsync_of(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """The disk fills as `name` is synced (the last step before it replaces the old)."""
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        if Path(os.readlink(f"/proc/self/fd/{fd}")).name.startswith(f".{name}."):
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)


def write_reports(directory: Path) -> None:
    build_report(directory)
    build_html(directory)


def write_ab_files(directory: Path) -> None:
    record = read_record(directory)
    write_verdicts(directory, verdict_table(load_results(directory), 0.05, aa=True), record,
                   aa=True)


def write_results(directory: Path) -> None:
    ResultSet.resume(directory).write()


def write_compare_json(directory: Path) -> None:
    compared = directory.parent / "compared"  # compare never writes into what it reads
    if not compared.exists():
        shutil.copytree(directory, compared)
    result = CliRunner().invoke(app, ["compare", str(compared), str(compared), "--json-file",
                                      str(directory / "compare.json")])
    if result.exit_code:  # the command says a full disk in one paragraph, exit 2
        raise OSError(errno.ENOSPC, f"No space left on device: {result.output}")


def write_plot(directory: Path) -> None:
    write_plots(summary_table(load_results(directory)), directory)


def write_raw(directory: Path) -> None:
    save_raw(directory / "raw" / "ping-pass1.txt", "64 bytes from 10.0.0.2: icmp_seq=1\n")


def write_header(directory: Path) -> None:
    RunRecord(kind="matrix", status="completed").save(directory)


WRITERS: list[tuple[str, str, Callable[[Path], None]]] = [
    ("results-quick", REPORT, write_reports),
    ("results-quick", HTML_REPORT, write_reports),
    ("results-quick", "throughput.png", write_plot),
    ("ab-aa-baseline", VERDICTS_FILE, write_ab_files),
    ("ab-aa-baseline", NOISE_FILE, write_ab_files),
    ("results-quick", PARQUET, write_results),
    ("results-quick", CSV, write_results),
    ("results-quick", RUN_FILE, write_header),
    ("results-quick", "compare.json", write_compare_json),
    ("results-quick", "raw/ping-pass1.txt", write_raw),
]


@pytest.mark.parametrize(("data", "name", "write"), WRITERS, ids=[w[1] for w in WRITERS])
def test_each_kept_file_is_written_whole_with_the_umasks_mode(
        data_copy: Callable[[str], Path], umask: Callable[[int], None],
        monkeypatch: pytest.MonkeyPatch, data: str, name: str,
        write: Callable[[Path], None]) -> None:
    directory = data_copy(data)
    umask(0o027)
    write(directory)
    assert (directory / name).stat().st_mode & 0o777 == 0o640
    kept = (directory / name).read_bytes()
    fail_fsync_of(monkeypatch, Path(name).name)
    with pytest.raises(OSError, match="No space"):
        write(directory)
    assert (directory / name).read_bytes() == kept
    assert not [p for p in directory.rglob("*.tmp")]  # no temp file left behind


@pytest.mark.parametrize("args", [
    ["export", "{quick}", "--format", "github", "-o", "/proc/vnetbench-x"],
    ["export", "{quick}", "--format", "bencher", "-o", "/proc/vnetbench-x"],
    ["compare", "{quick}", "{quick}", "--json-file", "/proc/vnetbench-x"],
])
def test_an_output_file_where_none_can_be_made_is_refused_first(
        args: list[str], data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """/proc exists, but no file can be made in it: it was a FileNotFoundError traceback
    after the work was done (found by tests/unit/test_cli_fuzz.py)."""
    from tests.unit.commands.refusals import refused

    quick = str(data_dir / "results-quick")
    said = refused([a.replace("{quick}", quick) for a in args], monkeypatch)
    assert "/proc cannot be written (No such file or directory)" in said
