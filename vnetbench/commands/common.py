"""What the commands share: their error handling, reading a topology, the results
directory, and the small parsers of option values."""

from __future__ import annotations

import errno
import functools
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import typer
from rich.table import Table
from typer.core import TyperCommand, TyperGroup

from vnetbench.errors import EnvironmentProblem, UserError
from vnetbench.runtime.paths import TOPOLOGIES
from vnetbench.terminal.ui import err_console, error_line, out_console

if TYPE_CHECKING:
    import pandas as pd

    from vnetbench.analysis.slo import Checked, Target
    from vnetbench.analysis.venue import VenueVerdict
    from vnetbench.engines.base import EngineError
    from vnetbench.model.topology import Topology
    from vnetbench.terminal.machine_output import JsonWanted
    from vnetbench.terminal.outputs import Input


DEFAULT_TOPOLOGY = TOPOLOGIES / "two-sites.yml"
DEFAULT_BLOCK = "10.191.0.0/16"
OUT_HELP = ("Results directory (BENCH_OUT, else ./out): the run writes a new directory of "
            "its own in it, never over a file; refused when it is a file or an input.")
WRITE_ERRNOS = {errno.ENOSPC, errno.EROFS, errno.EACCES, errno.EDQUOT, errno.EPERM}

P = ParamSpec("P")
R = TypeVar("R")


NAME_MAX, PATH_MAX = 255, 4096  # bytes: Linux's longest file name and path


def overlong_path(values: Iterable[object]) -> str:
    """The first path among a command's arguments that the system cannot name ('' when
    none): refused before the command starts (Path.exists() raised ENAMETOOLONG)."""
    for value in values:
        for path in value if isinstance(value, list | tuple) else [value]:
            if isinstance(path, PurePath):
                raw = os.fsencode(path)
                if len(raw) >= PATH_MAX or any(len(part) > NAME_MAX
                                               for part in raw.split(b"/")):
                    return str(path)
    return ""


def name_too_long(path: object) -> str:
    shown = str(path) if len(str(path)) <= 80 else f"{str(path)[:60]}...{str(path)[-12:]}"
    return (f"{shown}: its name is longer than this system allows (a file or directory "
            f"name is at most {NAME_MAX} bytes, a whole path {PATH_MAX - 1}). Give a "
            "shorter path.")


def engine_errors() -> tuple[type[Exception], ...]:
    """EngineError once the engines are loaded, else nothing: only a command that
    reached them can raise it, and loading them (the Docker clients, pydantic's
    models) took 0.9 s of every command's start, `--help` and `--version` included."""
    base = sys.modules.get("vnetbench.engines.base")
    return (base.EngineError,) if base is not None else ()


def guarded(command: Callable[P, R]) -> Callable[P, R]:
    """User errors print one paragraph and exit 2 (the environment's: 3); Ctrl-C/SIGTERM
    exit 130."""

    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        from vnetbench.runtime.interrupts import teardown_guard

        if too_long := overlong_path([*args, *kwargs.values()]):
            err_console.print(error_line(name_too_long(too_long)), highlight=False,
                              soft_wrap=True)
            raise typer.Exit(2)
        try:
            with teardown_guard():
                return command(*args, **kwargs)
        except UserError as error:
            err_console.print(error_line(str(error)), highlight=False, soft_wrap=True)
            raise typer.Exit(error.exit_code) from None
        except KeyboardInterrupt:
            err_console.print("interrupted: everything of the run was torn down; "
                              "results measured so far are kept")
            raise typer.Exit(130) from None
        except engine_errors() as error:
            engine_gone(error)  # type: ignore[arg-type]  # engine_errors() has only it
            raise
        except OSError as error:
            if error.errno == errno.ENAMETOOLONG:  # a path given inside another value
                err_console.print(error_line(name_too_long(error.filename)),
                                  highlight=False, soft_wrap=True)
                raise typer.Exit(2) from None
            if error.errno not in WRITE_ERRNOS:
                raise
            err_console.print(error_line(
                f"{error.strerror or error} writing "
                f"{error.filename or 'the results'}. Everything the run started "
                "was removed, and the files written before are whole (they are written "
                "whole or not at all). Free space, or give --out a directory that can be "
                "written, and run again."), highlight=False, soft_wrap=True)
            raise typer.Exit(EnvironmentProblem.exit_code) from None

    return wrapper


# Click's exceptions where this typer has them: its own click, or the copy typer 0.29
# vendors (typer.BadParameter is one of them, whichever it is).
CLICK_ERRORS: Any = sys.modules[typer.BadParameter.__module__]
NO_ARGS_IS_HELP: Any = getattr(CLICK_ERRORS, "NoArgsIsHelpError", ())  # click 8.2+


class OneParagraphUsage(TyperGroup):
    """Click's own refusals (a value not among an option's choices, a missing
    argument, an unknown option) as vnetbench's one paragraph and exit 2, not Click's
    usage box; a bare `vnetbench` still shows the help."""

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True,
             windows_expand_args: bool = True, **extra: Any) -> Any:
        def run() -> Any:
            return super(OneParagraphUsage, self).main(
                args, prog_name, complete_var, False, windows_expand_args, **extra)

        if not standalone_mode:
            return run()
        try:
            code = run()
        except NO_ARGS_IS_HELP as help_asked:
            help_asked.show()
            sys.exit(help_asked.exit_code)
        except CLICK_ERRORS.UsageError as error:
            command = error.ctx.command_path if error.ctx else "vnetbench"
            err_console.print(error_line(
                f"{said(error)}. See '{command} --help' for what "
                "it takes."), highlight=False, soft_wrap=True)
            sys.exit(2)
        except CLICK_ERRORS.ClickException as error:
            error.show()
            sys.exit(error.exit_code)
        except typer.Abort:
            err_console.print("aborted")
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)


class OnceOnlyCommand(TyperCommand):
    """An option given twice (`run --overlay a --overlay b`, `--baseline --no-baseline`)
    is refused, exit 2, where Click would silently keep the last; an option that takes a
    list by repeating it (`matrix --overlay`) may repeat."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        given = repeated_option(self.get_params(ctx), args)
        if given:
            raise CLICK_ERRORS.UsageError(
                f"{' and '.join(given)}: one option given {len(given)} times, and only "
                "one would count. Give it once (for several values, one option: e.g. "
                "--overlay wireguard,tinc on run)", ctx=ctx)
        return list(super().parse_args(ctx, args))


def repeated_option(params: Sequence[Any], args: Sequence[str]) -> list[str]:
    """The first option that is neither a list nor a count given more than once, as
    each time was written ('--overlay a', '--overlay b'); [] when none is."""
    options = {name: param for param in params if param.param_type_name == "option"
               for name in (*param.opts, *param.secondary_opts)}
    seen: dict[str, list[str]] = {}
    tokens = iter(args)
    for token in tokens:
        if token == "--":
            break
        name, equals, _ = token.partition("=") if token.startswith("--") else (token, "", "")
        param = options.get(name)
        if param is None:
            continue
        written = token
        if not param.is_flag and not param.count and not equals:
            written = f"{token} {next(tokens, '')}".strip()
        if not (param.multiple or param.count):
            seen.setdefault(param.name, []).append(written)
    return next((given for given in seen.values() if len(given) > 1), [])


def said(error: Any) -> str:
    """A Click refusal's own words, without typer's 'Value error, ' inside them."""
    return str(error.format_message()).replace("Value error, ", "").rstrip(".")


def engine_gone(error: EngineError) -> None:
    """An engine call failed: if the engine no longer answers, one paragraph and exit 3
    (a bug otherwise: the traceback stays)."""
    from vnetbench.engines import local

    if local().versions().engine is not None:
        return
    last = (error.stderr or str(error)).strip().splitlines()[-1:]
    err_console.print(error_line(
        f"the Docker engine stopped answering ({' '.join(last)}). "
        "The results measured before are kept in the run directory. Start the engine "
        "again (make setup), then run 'vnetbench clean' to remove what the run left."),
        highlight=False, soft_wrap=True)
    raise typer.Exit(EnvironmentProblem.exit_code) from None


def conclude(directory: Path, allow_failed: bool, targets: Sequence[Target] = (),
             wanted: JsonWanted | None = None,
             summary: Callable[[pd.DataFrame], None] | None = None) -> None:
    """A measuring command's end: a venue's verdict first (a room target on a
    workload), the `summary` of the results (run's table), its targets' lines (--slo),
    then exit 1 when a target was missed, or a pass failed or its path was dead
    (unless --allow-failed), each said in one line on stderr; with
    --json/--json-file, the result document first."""
    import pandas as pd

    from vnetbench.analysis.results import PARQUET, load_results
    from vnetbench.analysis.slo import check_targets, misses_summary
    from vnetbench.terminal.exitstatus import (
        ExitStatus,
        failed_cells,
        failure_summary,
        passes_status,
    )

    measured = (directory / PARQUET).is_file()
    frame = load_results(directory) if measured else pd.DataFrame()
    status = ExitStatus.OK
    checked = check_targets(frame, targets) if targets and measured else []
    venue = venue_of(directory, frame, checked)
    for line in venue.lines() if venue else []:
        out_console.print(line, highlight=False, markup=False, soft_wrap=True)
    if summary is not None:
        summary(frame)
    if targets and measured:
        record_targets(directory, targets)
        for line in (c.line() for c in checked):
            out_console.print(line, highlight=False, markup=False, soft_wrap=True)
        missed = [c for c in checked if not c.met]
        if missed:
            err_console.print(error_line(misses_summary(missed)), highlight=False,
                              soft_wrap=True)
            status = ExitStatus.MISSED
    failed = failed_cells(frame)
    if failed:
        said = failure_summary(failed, allow_failed)
        if passes_status(failed, allow_failed):
            err_console.print(error_line(said), highlight=False, soft_wrap=True)
            status = ExitStatus.MISSED
        else:
            err_console.print(said, style="yellow", highlight=False, soft_wrap=True)
    if wanted:
        from vnetbench.commands.documents import measured_document

        wanted.emit(measured_document(wanted.command, directory, frame, checked, failed,
                                      allow_failed, status, venue))
    if status:
        raise typer.Exit(status)


def venue_of(directory: Path, frame: pd.DataFrame, checked: Sequence[Checked]
             ) -> VenueVerdict | None:
    """The room's venue verdict on the checked targets (None: no room target)."""
    from vnetbench.analysis.runrecord import read_record
    from vnetbench.analysis.venue import results_verdict

    if not checked:
        return None
    return results_verdict(frame, checked, read_record(directory).topology)


def record_targets(directory: Path, targets: Sequence[Target]) -> None:
    """run.json keeps the targets, so the report says which were missed."""
    from vnetbench.analysis.runrecord import read_record

    record = read_record(directory)
    record.targets = [target.text for target in targets]
    record.save(directory)


def read_topology(path: Path, overrides: Mapping[str, object] | None = None) -> Topology:
    """A topology file, its overlay name and overlay_options keys checked against the
    adapters vnetbench has."""
    from vnetbench.analysis.venue import topology_targets
    from vnetbench.engines import ENGINE_NAMES
    from vnetbench.model.topology import load_topology
    from vnetbench.overlays import OVERLAY_NAMES, check_overlay_options

    topology = check_overlay_options(load_topology(path, dict(overrides or {}),
                                                   OVERLAY_NAMES, ENGINE_NAMES), str(path))
    # its slo: checkable (on the workload's phases where it has one: else --workload's)
    topology_targets(topology.slo, topology.workload, str(path),
                     moments=topology.workload is not None)
    return topology


def out_directory(out: Path | None, check: bool = True, command: str = "vnetbench",
                  inputs: Sequence[Input] = ()) -> Path:
    """--out, else BENCH_OUT, else ./out; checked before anything starts: a directory
    that can be written, and no input of the command (vnetbench/terminal/outputs.py)."""
    import os

    from vnetbench.runtime.rundir import writable_directory
    from vnetbench.terminal.outputs import Output, check_outputs

    path = out if out is not None else Path(os.environ.get("BENCH_OUT") or "out")
    if not check:
        return path
    option = "--out" if out is not None or not os.environ.get("BENCH_OUT") else "BENCH_OUT"
    check_outputs(command, [Output(option, path, directory=True,
                                   default=out is None and option == "--out")], inputs)
    return writable_directory(path, option)


def file_inputs(**paths: Path | str | None) -> list[Input]:
    """Options naming files the command reads (--topology=..., --workload=...), as
    inputs: a name that is no file (a shipped profile's) is none."""
    from vnetbench.terminal.outputs import Input

    return [Input(f"--{option.replace('_', '-')} {path}", Path(path))
            for option, path in paths.items() if path is not None and exists(Path(path))]


def exists(path: Path) -> bool:
    """Path.exists, False for a name too long to look up."""
    try:
        return path.exists()
    except OSError:
        return False


def with_engine(topology: Topology, engine: str | None) -> Topology:
    """The topology on the engine `--engine` names."""
    if engine is None:
        return topology
    from vnetbench.engines import ENGINES

    if engine not in ENGINES:
        raise UserError(f"--engine {engine!r} is not an engine vnetbench runs on: give "
                        f"one of {', '.join(f'--engine {name}' for name in ENGINES)} "
                        f"({'; '.join(f'{n}: {e.summary}' for n, e in ENGINES.items())}).")
    return topology.model_copy(update={"engine": topology.engine.model_copy(
        update={"name": engine})})


def with_faults(topology: Topology, items: list[str] | None) -> Topology:
    """The topology injecting the faults `--fault KEY=VALUE,...` gives (each one entry of
    `faults:`, e.g. kill=switch2,restart_after=3s), in place of the file's; validated
    as the file's would be."""
    from vnetbench.model.topology import parse_topology
    from vnetbench.overlays import OVERLAY_NAMES

    if not items:
        return topology
    faults = [fault_fields(item) for item in items]
    data = {**topology.model_dump(mode="json", by_alias=True), "faults": faults}
    return parse_topology(data, f"--fault {' --fault '.join(items)}", overlays=OVERLAY_NAMES)


def with_workload(topology: Topology, workload: str | None) -> Topology:
    """The topology with `--workload`'s workload (a file, or a shipped profile's name)
    in place of its own `workload:` section."""
    from vnetbench.model.workload import workload_from

    if workload is None:
        return topology
    return topology.model_copy(update={"workload": workload_from(workload)})


def fault_fields(item: str) -> dict[str, str]:
    """'kill=switch2,restart_after=3s' -> {'kill': 'switch2', 'restart_after': '3s'}."""
    fields = {}
    for part in (p.strip() for p in item.split(",") if p.strip()):
        key, equals, value = part.partition("=")
        if not equals or not key.strip() or not value.strip():
            raise UserError(f"--fault {item}: '{part}' is not KEY=VALUE. Give e.g. --fault "
                            "kill=switch2,restart_after=3s, --fault link=backbone,for=3s, "
                            "--fault loss=100%,for=2s or --fault delay=200ms,for=2s "
                            "(at=5s: when).")
        if key.strip() in fields:
            raise UserError(f"--fault {item}: {key.strip()} is given twice in one fault. Give "
                            "each key once; for two faults, give --fault twice (e.g. --fault "
                            "kill=switch2 --fault kill=switch1).")
        fields[key.strip()] = value.strip()
    return fields


def with_pair(topology: Topology, pair: str | None) -> Topology:
    """The topology measuring the agents `--pair FROM,TO` names."""
    from vnetbench.model.topology import MeasurePair

    if pair is None:
        return topology
    names = [name.strip() for name in pair.split(",")]
    agents = [a.name for a in topology.agents]
    problem = pair_problem(names, agents, topology.name)
    if problem:
        raise UserError(f"--pair {pair!r}: {problem}. Give two different agents of the "
                        f"topology, e.g. --pair {agents[0]},{agents[-1]}.")
    return topology.model_copy(update={"measure": MeasurePair(source=names[0],
                                                              target=names[1])})


def pair_problem(names: list[str], agents: list[str], topology: str) -> str:
    if len(names) != 2 or not all(names):
        return "it takes two agent names separated by a comma"
    unknown = [name for name in names if name not in agents]
    if unknown:
        return f"topology '{topology}' has no agent named {', '.join(unknown)}"
    if names[0] == names[1]:
        return "FROM and TO are the same agent"
    return ""


def number_list(text: str | None, option: str) -> tuple[int, ...] | None:
    """'100,500,1000' -> (100, 500, 1000)."""
    if text is None:
        return None
    try:
        return tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise UserError(f"{option} {text!r} is not a list of whole numbers; give e.g. "
                        f"{option} 100,500,1000.") from None


def parse_fraction(text: str, option: str) -> float:
    """'5%' -> 0.05, for an option given in percent."""
    from vnetbench.core.units import parse_percent

    try:
        return parse_percent(text) / 100
    except ValueError as error:
        raise UserError(f"{option} {text}: {error}.") from None


def rich_table(frame: pd.DataFrame) -> Table:
    table = Table(*[str(c) for c in frame.columns])
    for row in frame.itertuples(index=False):
        table.add_row(*[str(v) for v in row])
    return table
