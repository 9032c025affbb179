"""The vnetbench command line (Typer). Each command is thin: it parses options
and calls the module that does the work."""

from __future__ import annotations

import errno
import functools
from collections.abc import Callable, Mapping
from contextlib import suppress
from ipaddress import IPv4Network
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ParamSpec, TypeVar

import typer
from rich.markup import escape
from rich.table import Table

from vnetbench import __version__
from vnetbench.engines.base import EngineError
from vnetbench.errors import UserError
from vnetbench.paths import TOPOLOGIES
from vnetbench.report.options import ExportFormat, LabelFrom, Order
from vnetbench.ui import err_console, note, out_console

if TYPE_CHECKING:
    import pandas as pd

    from vnetbench.engines.base import Engine
    from vnetbench.topology import Topology


DEFAULT_TOPOLOGY = TOPOLOGIES / "two-sites.yml"
DEFAULT_BLOCK = "10.191.0.0/16"
WRITE_ERRNOS = {errno.ENOSPC, errno.EROFS, errno.EACCES, errno.EDQUOT, errno.EPERM}

P = ParamSpec("P")
R = TypeVar("R")


def guarded(command: Callable[P, R]) -> Callable[P, R]:
    """User errors print one paragraph and exit 2; Ctrl-C/SIGTERM exit 130."""

    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        from vnetbench.interrupts import teardown_guard

        try:
            with teardown_guard():
                return command(*args, **kwargs)
        except UserError as error:
            err_console.print(f"[bold red]error:[/] {escape(str(error))}", highlight=False,
                              soft_wrap=True)
            raise typer.Exit(error.exit_code) from None
        except KeyboardInterrupt:
            err_console.print("interrupted: everything of the run was torn down; "
                              "results measured so far are kept")
            raise typer.Exit(130) from None
        except EngineError as error:
            engine_gone(error)
            raise
        except OSError as error:
            if error.errno not in WRITE_ERRNOS:
                raise
            err_console.print(
                f"[bold red]error:[/] {escape(error.strerror or str(error))} writing "
                f"{escape(str(error.filename or 'the results'))}. Everything the run started "
                "was removed, and the files written before are whole (they are written "
                "whole or not at all). Free space, or give --out a directory that can be "
                "written, and run again.", highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None

    return wrapper


def engine_gone(error: EngineError) -> None:
    """An engine call failed: if the engine no longer answers, one paragraph and exit 2
    (a bug otherwise: the traceback stays)."""
    from vnetbench.engines.docker import engine_version

    if engine_version() is not None:
        return
    last = (error.stderr or str(error)).strip().splitlines()[-1:]
    err_console.print(
        f"[bold red]error:[/] the Docker engine stopped answering ({escape(' '.join(last))}). "
        "The results measured before are kept in the run directory. Start the engine "
        "again (make setup), then run 'vnetbench clean' to remove what the run left.",
        highlight=False, soft_wrap=True)
    raise typer.Exit(2) from None


app = typer.Typer(
    help="Containerised benchmark testbed for overlay networks (vNet first).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)
images_app = typer.Typer(help="Build the project's images.", no_args_is_help=True)
app.add_typer(images_app, name="images")

TopologyOption = Annotated[
    Path, typer.Option("--topology", "-t", help="Topology YAML file.")
]
EngineOption = Annotated[str | None, typer.Option(
    help="compose: this machine's engine; swarm: the nodes of a Docker Swarm (the "
         "topology's manager, else VNETBENCH_SWARM, else this machine's swarm; 'vnetbench "
         "swarm up' makes a test one here, used when named: manager: test or "
         "VNETBENCH_SWARM=test). Overrides the topology's 'engine'.")]
swarm_app = typer.Typer(help="A test Docker Swarm on this machine (Docker-in-Docker nodes).",
                        no_args_is_help=True)
app.add_typer(swarm_app, name="swarm")


def read_topology(path: Path, overrides: Mapping[str, object] | None = None) -> Topology:
    """A topology file, its overlay name and overlay_options keys checked against the
    adapters vnetbench has."""
    from vnetbench.overlays import OVERLAY_NAMES, check_overlay_options
    from vnetbench.topology import load_topology

    return check_overlay_options(load_topology(path, dict(overrides or {}), OVERLAY_NAMES),
                                 str(path))


def out_directory(out: Path | None, check: bool = True) -> Path:
    """--out, else BENCH_OUT, else ./out; checked writable before anything starts."""
    import os

    from vnetbench.rundir import writable_directory

    if out is not None:
        return writable_directory(out, "--out") if check else out
    path = Path(os.environ.get("BENCH_OUT") or "out")
    return writable_directory(path, "BENCH_OUT" if os.environ.get("BENCH_OUT") else "--out"
                              ) if check else path


@app.command()
@guarded
def validate(files: Annotated[list[Path], typer.Argument(help="Topology files.")]) -> None:
    """Check topology files and report every problem with its location."""
    from vnetbench.overlays import overlay_for

    failed = []
    for path in files:
        try:
            topology = read_topology(path)
            # its overlay_options are valid, and its nodes fit the overlay's addresses
            overlay_for(topology).overlay_addresses(topology)
        except UserError as error:
            failed.append(str(error))
            continue
        out_console.print(
            f"{path}: ok ({topology.overlay}, {len(topology.switches)} switch(es), "
            f"{len(topology.agents)} agent(s))"
        )
    if failed:
        raise UserError("\n\n".join(failed))


@app.command()
@guarded
def render(
    file: Annotated[Path, typer.Argument(help="Topology file.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Directory to write.")],
    run_id: Annotated[str | None, typer.Option(help="Run id (default: the topology's name).")]
    = None,
    block: Annotated[str, typer.Option(help="The run's /16 address block.")] = DEFAULT_BLOCK,
) -> None:
    """Render a topology into compose.yml (and its files) without starting anything."""
    from vnetbench.overlays import overlay_for
    from vnetbench.render import render_run
    from vnetbench.rundir import writable_directory

    topology = read_topology(file)
    writable_directory(output, "--output")
    try:
        network = IPv4Network(block)
    except ValueError as error:
        raise UserError(f"--block {block} is not an IPv4 network ({error}).") from None
    overlay = overlay_for(topology)
    overlay.detect()  # what the images hold, asked once; rendering itself is pure
    topology = overlay.adjust(topology).topology
    rendered = render_run(topology, overlay, run_id or topology.name, network, output)
    out_console.print(str(rendered.compose_file))


@app.command()
@guarded
def run(
    scenarios: Annotated[list[str] | None, typer.Argument(
        help="Scenarios: throughput, join, config, flood, transfer.")] = None,
    method: Annotated[str | None, typer.Option(
        help="A reference method instead of scenarios: vpncloud, libp2p-perf, galaxy42, "
             "instageni (vnetbench methods).")] = None,
    short: Annotated[bool, typer.Option(
        help="The method's short form (fewer steps, short passes).")] = False,
    topology_file: TopologyOption = DEFAULT_TOPOLOGY,
    overlay: Annotated[str | None, typer.Option(
        help="Overlay, or several separated by commas, run one after another "
             "(overrides the topology's).")] = None,
    seconds: Annotated[float | None, typer.Option(help="TCP stream length (BENCH_SECONDS).")]
    = None,
    passes: Annotated[int | None, typer.Option(help="Passes per scenario.")] = None,
    machines: Annotated[int | None, typer.Option(help="join/config size (BENCH_MACHINES).")]
    = None,
    streams: Annotated[int | None, typer.Option(help="Parallel TCP streams (iperf3 -P).")]
    = None,
    reverse: Annotated[bool | None, typer.Option(help="Server sends (iperf3 -R).")] = None,
    udp_mbit: Annotated[float | None, typer.Option(help="UDP at this rate instead of TCP.")]
    = None,
    ping_size: Annotated[int | None, typer.Option(help="Ping payload bytes.")] = None,
    ping_sizes: Annotated[str | None, typer.Option(
        help="Ping payloads measured in turn, e.g. 100,500,1000.")] = None,
    clients: Annotated[int | None, typer.Option(
        help="Client containers at once, each its own iperf3.")] = None,
    udp_length: Annotated[int | None, typer.Option(
        help="UDP datagram payload bytes (iperf3 -l).")] = None,
    tunnel_mtu: Annotated[int | None, typer.Option(
        help="The overlay's tunnel MTU (refused where it cannot be set).")] = None,
    transfer_bytes: Annotated[str | None, typer.Option(
        help="Bytes each way of the transfer scenario, e.g. 100MiB.")] = None,
    no_encryption: Annotated[bool, typer.Option(
        "--no-encryption",
        help="The overlay's data unencrypted where it can be (refused where not).")]
    = False,
    pair: Annotated[str | None, typer.Option(
        help="The agents throughput measures, FROM,TO (the topology's measure).")] = None,
    baseline: Annotated[bool, typer.Option(
        help="As the seed, measure throughput's path without the overlay first.")] = True,
    vnet_image: Annotated[list[str] | None, typer.Option(
        help="vNet image per role, ROLE=IMAGE (or one IMAGE for all roles).")] = None,
    vnet_profile: Annotated[Path | None, typer.Option(
        help="vNet profile overrides (VNETBENCH_VNET_PROFILE).")] = None,
    out: Annotated[Path | None, typer.Option(help="Results directory (BENCH_OUT).")] = None,
    engine: EngineOption = None,
) -> None:
    """Bring the topology up, run the scenarios' passes (or a reference method's
    steps), tear everything down."""
    from vnetbench.overlays.vnet.artifacts import with_vnet_options
    from vnetbench.runs.comparison import parse_overlays

    overrides = {k: v for k, v in {"seconds": seconds, "passes": passes, "machines": machines,
                                   "streams": streams, "reverse": reverse,
                                   "udp_mbit": udp_mbit, "ping_size": ping_size,
                                   "ping_sizes": number_list(ping_sizes, "--ping-sizes"),
                                   "clients": clients, "udp_length": udp_length,
                                   "tunnel_mtu": tunnel_mtu, "transfer_bytes": transfer_bytes,
                                   "encryption": False if no_encryption else None}.items()
                 if v is not None}
    topology = with_vnet_options(read_topology(topology_file, overrides), vnet_image,
                                 vnet_profile)
    topology = with_engine(with_pair(topology, pair), engine)
    overlays = parse_overlays(overlay, topology.overlay)
    if method is not None:
        run_method_command(method, scenarios or [], topology, overlays, short, baseline, out,
                           overrides)
        return
    if short:
        raise UserError("--short is a reference method's short form; give --method NAME "
                        "with it, or shorten scenarios with --seconds and --passes.")
    if not scenarios:
        raise UserError("Name what to run: one or more scenarios (throughput, join, config, "
                        "flood, transfer), or a reference method with --method NAME.")
    run_scenarios_command(scenarios, topology, overlays, baseline, out)


def number_list(text: str | None, option: str) -> tuple[int, ...] | None:
    """'100,500,1000' -> (100, 500, 1000)."""
    if text is None:
        return None
    try:
        return tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise UserError(f"{option} {text!r} is not a list of whole numbers; give e.g. "
                        f"{option} 100,500,1000.") from None


def run_scenarios_command(scenarios: list[str], topology: Topology, overlays: list[str],
                          baseline: bool, out: Path | None) -> None:
    from vnetbench.report.tables import comparison_table
    from vnetbench.results import load_results
    from vnetbench.runs.comparison import run_overlays
    from vnetbench.scenarios import get_scenario

    chosen = [get_scenario(name) for name in scenarios]
    for name in overlays:  # every overlay's stacks, before the first one starts
        for scenario in chosen:
            scenario.check(topology.model_copy(update={"overlay": name}))
    directory = run_overlays(topology, overlays, chosen, out_directory(out), baseline)
    table = comparison_table(load_results(directory))
    if not table.empty:
        out_console.print(rich_table(table))
    note(f"results: {directory}")


def run_method_command(name: str, scenarios: list[str], topology: Topology,
                       overlays: list[str], short: bool, baseline: bool,
                       out: Path | None, given: Mapping[str, object]) -> None:
    """`run --method NAME`: its steps on each overlay, its table, report.md; the
    options given (--passes, --seconds...) above the method's own settings."""
    from vnetbench.methods import get_method
    from vnetbench.report.markdown import build_report
    from vnetbench.report.tables import method_table
    from vnetbench.results import load_results
    from vnetbench.runs.method import run_method

    if scenarios:
        raise UserError(f"--method {name} sets the measurement itself; drop the scenario "
                        f"names ({' '.join(scenarios)}) or the --method option.")
    method = get_method(name)
    directory = run_method(topology, method, overlays, out_directory(out), short, baseline,
                           dict(given))
    out_console.print(f"{method.name} ({method.reference}):")
    out_console.print(rich_table(method_table(load_results(directory), method, compact=True)))
    report_path, _ = build_report(directory)
    note(f"results: {directory}; report: {report_path}")


@app.command()
def methods() -> None:
    """List the reference methods `run --method` reproduces."""
    from vnetbench.methods import METHODS

    for method in METHODS.values():
        steps = "; ".join(s.label for s in method.steps)
        out_console.print(f"[bold]{method.name}[/] ({method.reference}): {method.summary}. "
                          f"Steps: {steps}.", soft_wrap=True)


def recorded_engine(record: Mapping[str, Any]) -> Engine:
    """The engine of a run `up` left running: a swarm's (run.json `hosts`), or here."""
    from vnetbench.engines import SwarmEngine, local
    from vnetbench.engines.swarm.cluster import discover
    from vnetbench.engines.swarm.engine import recorded_manager

    manager = recorded_manager(record)
    return SwarmEngine(discover(manager)) if manager else local()


def with_engine(topology: Topology, engine: str | None) -> Topology:
    """The topology on the engine `--engine` names."""
    if engine is None:
        return topology
    from vnetbench.topology import ENGINE_NAMES

    if engine not in ENGINE_NAMES:
        raise UserError(f"--engine {engine!r} is not an engine vnetbench runs on: give "
                        "--engine compose (this machine) or --engine swarm (a Docker Swarm).")
    return topology.model_copy(update={"engine": engine})


def with_pair(topology: Topology, pair: str | None) -> Topology:
    """The topology measuring the agents `--pair FROM,TO` names."""
    from vnetbench.topology import MeasurePair

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


def rich_table(frame: pd.DataFrame) -> Table:
    table = Table(*[str(c) for c in frame.columns])
    for row in frame.itertuples(index=False):
        table.add_row(*[str(v) for v in row])
    return table


@app.command()
@guarded
def sweep(
    scenario: Annotated[str, typer.Argument(help="The scenario, e.g. throughput.")],
    setting: Annotated[str, typer.Option("--set", help="SEGMENT.KEY=V1,V2,... e.g. "
                                         "backbone.loss=0,0.5,1,2,5%")],
    topology_file: TopologyOption = DEFAULT_TOPOLOGY,
    overlay: Annotated[str | None, typer.Option(help="Overlays, separated by commas.")] = None,
    passes: Annotated[int | None, typer.Option(help="Passes per value.")] = None,
    seconds: Annotated[float | None, typer.Option(help="TCP stream length.")] = None,
    out: Annotated[Path | None, typer.Option(help="Results directory (BENCH_OUT).")] = None,
) -> None:
    """Run a scenario over a list of values of one link parameter; plot it."""
    from vnetbench.engines import require_engine
    from vnetbench.runs.comparison import parse_overlays
    from vnetbench.runs.sweep import run_sweep
    from vnetbench.scenarios import get_scenario
    from vnetbench.shaping.assign import parse_assignment

    overrides = {k: v for k, v in {"seconds": seconds, "passes": passes}.items()
                 if v is not None}
    topology = read_topology(topology_file, overrides)
    assignment = parse_assignment(setting)
    overlays = parse_overlays(overlay, topology.overlay)
    require_engine()
    directory = run_sweep(topology, get_scenario(scenario), assignment, overlays,
                          out_directory(out))
    for plot in sorted(directory.glob("sweep-*.png")):
        note(f"plot: {plot}")
    note(f"results: {directory}")


@app.command()
@guarded
def shape(
    run_id: Annotated[str, typer.Argument(help="Run id printed by `up`.")],
    setting: Annotated[list[str] | None, typer.Option(
        "--set", help="SEGMENT.KEY=VALUE, e.g. backbone.delay=20ms (repeatable); "
                      "none: apply the run's profiles again")] = None,
    out: Annotated[Path | None, typer.Option(help="Where `up` put the run directory.")] = None,
) -> None:
    """Change the link profiles of a running topology (from `vnetbench up`)."""
    from vnetbench.engines import require_engine
    from vnetbench.rundir import read_header, save_header
    from vnetbench.shaping.apply import check_shaping, shape_run
    from vnetbench.shaping.assign import parse_assignment, with_link_setting
    from vnetbench.topology import parse_topology

    run_dir = out_directory(out, check=False) / run_id
    record = read_header(run_dir) if run_id.strip() else {}
    if "topology" not in record:
        raise UserError(f"There is no run.json of a running topology for run '{run_id}' under "
                        f"{run_dir.parent}. Give the id `vnetbench up` printed, and --out if "
                        "it used one.")
    topology = parse_topology(record["topology"], str(run_dir / "run.json"))
    for item in setting or []:
        assignment = parse_assignment(item)
        if len(assignment.values) != 1:
            raise UserError(f"--set {item}: give one value here (lists are for sweep).")
        topology = with_link_setting(topology, assignment, assignment.values[0])
    check_shaping(topology)
    require_engine()
    from vnetbench.engines.base import RunRef

    applied = shape_run(RunRef(recorded_engine(record), run_id), topology)
    record["topology"] = topology.model_dump(mode="json")
    record.setdefault("links", {})["applied"] = {"shape": applied}
    save_header(run_dir, record)
    out_console.print(f"{run_id}: shaping applied to {len(applied) - 1 if applied else 0} "
                      f"container(s); run.json holds what the kernel reports")


@app.command()
@guarded
def matrix(
    quick: Annotated[bool, typer.Option(help="Short passes: a few minutes, for CI.")] = False,
    resume: Annotated[bool, typer.Option(
        help="Continue the newest matrix under --out (any date): its completed cells are "
             "kept, a cell cut short runs again whole.")]
    = False,
    overlay: Annotated[list[str] | None, typer.Option(help="Only these overlays.")] = None,
    method: Annotated[list[str] | None, typer.Option(
        help="Also this reference method (repeatable; 'all' for every one); "
             "its short form with --quick.")] = None,
    topology_file: TopologyOption = DEFAULT_TOPOLOGY,
    out: Annotated[Path, typer.Option(help="Where results/<date>-<cores>cpu goes.")]
    = Path("results"),
    engine: EngineOption = None,
) -> None:
    """Every available scenario on every available overlay, three passes each."""
    from vnetbench.methods import METHODS, get_method
    from vnetbench.overlays import check_overlay_name
    from vnetbench.rundir import writable_directory
    from vnetbench.runs.matrix import run_matrix

    for name in overlay or []:
        check_overlay_name(name)
    names = list(METHODS) if "all" in (method or []) else method or []
    methods = [get_method(name) for name in names]
    directory = run_matrix(with_engine(read_topology(topology_file), engine),
                           writable_directory(out, "--out"),
                           quick=quick, resume=resume,
                           overlay_names=overlay, methods=methods)
    out_console.print(str(directory))


@app.command()
@guarded
def report(directory: Annotated[Path, typer.Argument(help="A results directory.")]) -> None:
    """Write report.md (machine header, ranges, n, CV, ratios) with PNG plots, and
    report.html (the same sections, interactive figures, one self-contained file)."""
    from vnetbench.report.document import read_report
    from vnetbench.report.html import build_html
    from vnetbench.report.markdown import build_report

    read = read_report(directory)
    path, headline = build_report(directory, read)
    page = build_html(directory, read)
    out_console.print(headline)
    out_console.print(f"report: {path}", soft_wrap=True)
    out_console.print(f"report: {page}", soft_wrap=True)


@app.command()
@guarded
def history(
    directories: Annotated[list[Path], typer.Argument(
        help="Results directories, or a root holding several (e.g. results/).")],
    out: Annotated[Path, typer.Option(help="Where history.html goes.")] = Path("history"),
    noise: Annotated[Path | None, typer.Option(
        help="An A/A directory (vnetbench ab with no --b): changes beyond its noise floor "
             "are marked. Default: a noise.json in any of the directories.")] = None,
    label_from: Annotated[LabelFrom, typer.Option(
        help="Each directory's label: date (run.json started), vnet (the vNet image) or "
             "tools (the tools image).")] = LabelFrom.DATE,
    label: Annotated[list[str] | None, typer.Option(
        help="DIR=TEXT: this directory's label (repeatable); over --label-from.")] = None,
    order: Annotated[Order, typer.Option(help="date, or label (natural order).")]
    = Order.DATE,
) -> None:
    """One page of the headline metrics across results directories (builds): a graph
    per metric, the changes beyond this machine's noise floor marked and listed."""
    from vnetbench.report.history import build_history

    path = build_history(directories, out, noise, label_from, label or [], order)
    out_console.print(f"history: {path}", soft_wrap=True)


@app.command()
@guarded
def export(
    directory: Annotated[Path, typer.Argument(help="A results directory.")],
    form: Annotated[ExportFormat, typer.Option(
        "--format", help="github: github-action-benchmark's custom tools (two files, one "
                         "per direction); bencher: Bencher Metric Format.")],
    out: Annotated[Path | None, typer.Option(
        "-o", "--out", help="The file (github: FILE-bigger-is-better.json and "
                            "FILE-smaller-is-better.json); bencher: '-' prints it. Default: "
                            "github.json / bencher.json in DIR.")] = None,
    judge_all: Annotated[bool, typer.Option(
        "--all", help="Export the metrics declared noisy too (retransmits, mdev, CPU).")]
    = False,
) -> None:
    """A results directory's figures (mean over passes, lowest and highest pass) for a
    CI benchmark dashboard, each metric's direction from the metric catalogue."""
    from vnetbench.report.export import STDOUT, threshold_options, write_export

    written, found = write_export(directory, form, out, judge_all)
    for item in written:
        if item.path != STDOUT:
            out_console.print(f"{item.what}: {item.path}", soft_wrap=True)
    note(f"{len(found)} figures of {directory}")
    if form is ExportFormat.BENCHER:
        note("Bencher keeps each measure's direction in its threshold (bencher run "
             "options):")
        for line in threshold_options(found):
            err_console.print(f"  {line}", highlight=False, soft_wrap=True)


@app.command()
@guarded
def compare(
    old: Annotated[Path, typer.Argument(help="The reference results directory.")],
    new: Annotated[Path, typer.Argument(help="The results directory to judge.")],
    fail_over: Annotated[str, typer.Option(help="Exit 1 on a regression beyond this.")]
    = "5%",
    noise: Annotated[Path | None, typer.Option(
        help="An A/A directory (vnetbench ab with no --b): changes within its noise floor "
             "are no change. Default: OLD's or NEW's own noise.json, if either has one.")]
    = None,
    judge_all: Annotated[bool, typer.Option(
        "--all", help="Judge the metrics declared noisy too (retransmits, mdev, CPU).")]
    = False,
    json_out: Annotated[Path | None, typer.Option("--json", help="Also write JSON here.")]
    = None,
) -> None:
    """NEW/OLD per metric with a bootstrap interval over passes, judged against this
    machine's noise floor when one is known."""
    from vnetbench.report.ab import noise_near
    from vnetbench.report.compare import compare_directories, regressions
    from vnetbench.report.tables import markdown

    threshold = parse_fraction(fail_over, "--fail-over")
    floor, source = noise_near(noise, [old, new])
    table = compare_directories(old, new, threshold, floor, judge_all)
    if json_out:
        json_out.write_text(table.to_json(orient="records", indent=2))
    shown = table.assign(**{c: table[c].map(lambda v: f"{v:.3f}")
                            for c in ("ratio", "ci_low", "ci_high")})
    out_console.print(markdown(shown.drop(columns=["noise_pct"])))
    note(f"noise floor: {source}")
    worse = regressions(table)
    if not worse.empty:
        err_console.print(f"{len(worse)} regression(s) beyond {fail_over}: "
                          + ", ".join(f"{r.scenario}/{r.overlay}/{r.metric}"
                                      for r in worse.itertuples()))
        raise typer.Exit(1)


@app.command()
@guarded
def ab(
    scenario: Annotated[str, typer.Argument(help="The scenario, e.g. throughput or join.")],
    a: Annotated[list[str] | None, typer.Option(
        "--a", help="Arm A's changes to the topology, KEY=VALUE (repeatable); none: the "
                    "topology as it is.")] = None,
    b: Annotated[list[str] | None, typer.Option(
        "--b", help="Arm B's changes, KEY=VALUE (repeatable); none: B is A (an A/A, which "
                    "measures this machine's noise floor).")] = None,
    topology_file: TopologyOption = DEFAULT_TOPOLOGY,
    rounds: Annotated[int, typer.Option(
        help="Rounds; each brings A and B up once, in the order AB, BA, AB, ...")] = 8,
    passes: Annotated[int, typer.Option(help="Passes per bring-up (averaged).")] = 1,
    seconds: Annotated[float | None, typer.Option(help="TCP stream length.")] = None,
    min_effect: Annotated[str, typer.Option(
        help="Smallest change that gets a verdict (a smaller one is 'no change').")] = "5%",
    judge_all: Annotated[bool, typer.Option(
        "--all", help="Judge the metrics declared noisy too (retransmits, mdev, CPU).")]
    = False,
    out: Annotated[Path | None, typer.Option(help="Results directory (BENCH_OUT).")] = None,
) -> None:
    """Measure two variants in one session, their bring-ups interleaved, and judge
    each metric over the pairs (exit 1 when B is worse on a judged metric)."""
    from vnetbench.report.ab import verdict_summary
    from vnetbench.report.tables import markdown
    from vnetbench.runs.ab import make_arms, run_ab
    from vnetbench.scenarios import get_scenario

    effect = parse_fraction(min_effect, "--min-effect")
    overrides = {"seconds": seconds} if seconds is not None else {}
    arms = make_arms(read_topology(topology_file, overrides), a or [],
                     b if b is not None else None, passes)
    directory = run_ab(get_scenario(scenario), arms, rounds, out_directory(out), effect,
                       judge_all)
    table, verdict, worse = verdict_summary(directory)
    out_console.print(markdown(table))
    out_console.print(verdict, soft_wrap=True)
    note(f"results: {directory}")
    if worse:
        raise typer.Exit(1)


def parse_fraction(text: str, option: str) -> float:
    """'5%' -> 0.05, for an option given in percent."""
    from vnetbench.units import parse_percent

    try:
        return parse_percent(text) / 100
    except ValueError as error:
        raise UserError(f"{option} {text}: {error}.") from None


@app.command()
@guarded
def up(
    topology_file: TopologyOption = DEFAULT_TOPOLOGY,
    out: Annotated[Path | None, typer.Option(help="Where the run directory goes.")] = None,
    engine: EngineOption = None,
) -> None:
    """Bring a topology up, shaped, and leave it running (`vnetbench down RUN` stops it)."""
    from vnetbench.allocation import claimed_block
    from vnetbench.runs.comparison import require_overlays
    from vnetbench.runs.session import bring_up_detached

    topology = with_engine(read_topology(topology_file), engine)
    overlay = require_overlays(topology, [topology.overlay])[topology.overlay]
    with claimed_block() as claim:  # until its networks exist
        rendered = bring_up_detached(topology, overlay, out_directory(out), claim)
    out_console.print(rendered.run_id)


@app.command()
@guarded
def down(
    run_id: Annotated[str, typer.Argument(help="Run id printed by `up`.")],
    out: Annotated[Path | None, typer.Option(help="Where `up` put the run directory.")] = None,
) -> None:
    """Tear down one run: every container, network and volume with its label."""
    from vnetbench.engines import Removed, every_engine, require_engine, run_ids_present
    from vnetbench.engines.swarm.engine import recorded_manager
    from vnetbench.rundir import read_header

    if not run_id.strip() or any(c in run_id for c in "=,*? "):
        raise UserError(f"'{run_id}': down needs the id of a run, as `vnetbench up` printed "
                        "it (`vnetbench clean` lists the runs present).")
    require_engine()
    present: list[str] = []
    removed = Removed()
    record = {}
    with suppress(UserError):
        record = read_header(out_directory(out, check=False) / run_id)
    for engine in every_engine(recorded_manager(record)):  # here, then the run's swarm
        here = run_ids_present(engine)
        present += here
        if run_id in here:
            removed.add(engine.remove_run(run_id))
    if run_id not in present:
        raise UserError(f"There is no run '{run_id}' on this engine or a known swarm (runs "
                        f"present: {', '.join(sorted(set(present))) or 'none'}).")
    forget_up_keys(run_id, out)
    out_console.print(f"removed {removed} and {removed.rules} leftover iptables rule(s)")


def forget_up_keys(run_id: str, out: Path | None) -> None:
    """The private keys of a topology `up` left running, once it is down."""
    from vnetbench.lifecycle import forget_private_keys
    from vnetbench.overlays import overlay_for
    from vnetbench.rundir import read_header
    from vnetbench.topology import parse_topology

    run_dir = out_directory(out, check=False) / run_id
    if not (run_dir / "run.json").exists():
        note(f"[yellow]There is no run directory {run_dir}, so the private keys `up` wrote "
             "for this run were not removed: give `down` the --out that `up` was given "
             "(or remove that run directory's key files yourself).[/]")
        return
    with suppress(UserError):
        record = read_header(run_dir)
        if "topology" in record:
            topology = parse_topology(record["topology"], str(run_dir / "run.json"))
            forget_private_keys(overlay_for(topology), run_dir)


@app.command()
@guarded
def calibrate(
    seconds: Annotated[float, typer.Option(min=1, max=60, help="Length of each TCP stream.")]
    = 5.0,
    passes: Annotated[int, typer.Option(min=1, max=20, help="Streams per figure.")] = 3,
    scale: Annotated[bool, typer.Option(
        help="Also the testbed at scale: 200 containers up and down, the start gate, "
             "join passes on kept containers, rooms of vNet agents.")] = False,
    out: Annotated[Path, typer.Option(help="Where calibrate-<time>/ goes.")] = Path("results"),
) -> None:
    """This machine's limits and the testbed's own cost, each against its target: raw
    veth pair, baseline path, delay line, idle cost (and with --scale, the testbed at
    scale)."""
    import pandas as pd

    from vnetbench.rundir import writable_directory
    from vnetbench.runs.calibration import calibrate as measure
    from vnetbench.runs.calibration import figure_rows
    from vnetbench.topology import whole_seconds

    try:
        whole_seconds(seconds)  # the raw veth figures run iperf3 -t with it directly
    except ValueError as error:
        raise UserError(f"--seconds: {error}.") from None
    directory, figures = measure(writable_directory(out, "--out"), seconds, passes, scale)
    out_console.print(rich_table(pd.DataFrame(figure_rows(figures))))
    out_console.print(f"calibration: {directory / 'calibration.json'}")


@app.command()
@guarded
def clean(
    every: Annotated[bool, typer.Option("--all", help="Also runs in progress and topologies "
                                                      "left up on purpose (vnetbench up).")]
    = False,
) -> None:
    """Remove the runs whose vnetbench process is gone (--all: every run), nothing else."""
    from vnetbench.engines import Removed, every_engine, orphaned_runs, require_engine, run_owners

    require_engine()
    removed = Removed()
    owners: dict[str, set[str | None]] = {}
    chosen: list[str] = []
    for engine in every_engine():  # this machine's, then a known swarm's nodes
        here = run_owners(engine)
        owners |= here
        picked = sorted(here) if every else orphaned_runs(engine)
        chosen += picked
        for run_id in picked:
            removed.add(engine.remove_run(run_id))
        if every:  # rules of runs whose objects are all gone already
            removed.add(engine.remove_run(None))
    unknown = sorted(set(removed.unknown))
    rules = removed.rules
    chosen = sorted(set(chosen))
    kept = sorted(set(owners) - set(chosen))
    out_console.print(f"removed {removed} and {rules} leftover iptables rule(s) of "
                      f"{len(chosen)} run(s)" + (f"; kept {len(kept)} run(s) whose owner is "
                                                 f"alive or that were left up on purpose: "
                                                 f"{', '.join(kept)} (--all removes them)"
                                                 if kept else ""))
    if unknown:
        raise UserError(" ".join(unknown))


@app.command()
@guarded
def doctor() -> None:
    """Check the engine, Compose v2, /dev/net/tun, kernel features and images."""
    from vnetbench.doctor import diagnose

    checks, verdict_ok = diagnose()
    table = Table("check", "state", "detail")
    for name, ok, detail in checks:
        table.add_row(name, "[green]ok[/]" if ok else "[red]missing[/]", detail)
    out_console.print(table)
    out_console.print("verdict: ready" if verdict_ok else "verdict: NOT ready (see above)")
    if not verdict_ok:
        raise typer.Exit(1)


@images_app.command("build")
@guarded
def images_build() -> None:
    """Build the project's images (offline base with debootstrap if no registry)."""
    from vnetbench.engines import require_engine
    from vnetbench.engines.build import build_project_images

    require_engine()
    images = build_project_images(force=True)
    out_console.print(f"images ready: {images.tools}")


@images_app.command("vnet")
@guarded
def images_vnet(
    programs: Annotated[Path, typer.Option(help="Directory with the built conductor, switch "
                                                "and agent programs.")],
    vnet_profile: Annotated[Path | None, typer.Option(help="vNet profile overrides.")] = None,
) -> None:
    """Wrap user-built vNet programs into a runtime image (base + the libraries they need)."""
    from vnetbench.engines import require_engine
    from vnetbench.overlays.vnet.artifacts import build_runtime_image
    from vnetbench.overlays.vnet.profile import load_profile

    require_engine()
    image = build_runtime_image(programs, load_profile(vnet_profile))
    out_console.print(f"vNet runtime image ready: {image} (used for every role when the "
                      "named vNet images are absent)")


@app.command()
@guarded
def version() -> None:
    """Print vnetbench's version."""
    out_console.print(__version__)


@swarm_app.command("up")
@guarded
def swarm_up(
    nodes: Annotated[int, typer.Option(help="Nodes of the test swarm (2 to 5).")] = 2,
) -> None:
    """Start a test swarm of Docker-in-Docker nodes here (kept when it is up already)."""
    from vnetbench.engines import require_engine
    from vnetbench.engines.swarm.testbed import swarm_up as start

    require_engine()
    out_console.print(start(nodes))


@swarm_app.command("down")
@guarded
def swarm_down() -> None:
    """Remove the test swarm's nodes, their engines' data and its network."""
    from vnetbench.engines import require_engine
    from vnetbench.engines.swarm.testbed import swarm_down as remove

    require_engine()
    out_console.print(f"removed {remove()} test swarm node(s)")
