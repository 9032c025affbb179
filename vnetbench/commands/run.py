"""`vnetbench run`: bring a topology up, run scenarios' passes (or a reference
method's steps), tear everything down."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from vnetbench.commands.common import (
    DEFAULT_TOPOLOGY,
    OUT_HELP,
    conclude,
    file_inputs,
    guarded,
    out_directory,
    read_topology,
    rich_table,
    with_engine,
    with_faults,
    with_pair,
    with_workload,
)
from vnetbench.commands.options import (
    AllowFailedOption,
    EngineOption,
    SloOption,
    TopologyOption,
    settings_given,
    settings_options,
)
from vnetbench.declared import DECLARED
from vnetbench.errors import UserError
from vnetbench.terminal.machine_output import (
    JsonFile,
    JsonToStdout,
    JsonWanted,
    people_on_stderr,
)
from vnetbench.terminal.ui import note, out_console

if TYPE_CHECKING:
    import pandas as pd

    from vnetbench.analysis.slo import Target
    from vnetbench.model.topology import Topology
    from vnetbench.terminal.outputs import Input

SCENARIO_NAMES = ", ".join(DECLARED)  # the registered scenarios, in registration order


@guarded
@settings_options(after="overlay")
def run(
    scenarios: Annotated[list[str] | None, typer.Argument(
        help=f"Scenarios: {SCENARIO_NAMES}.")] = None,
    method: Annotated[str | None, typer.Option(
        help="A reference method instead of scenarios: vpncloud, libp2p-perf, galaxy42, "
             "instageni (vnetbench methods).")] = None,
    short: Annotated[bool, typer.Option(
        help="The method's short form (fewer steps, short passes).")] = False,
    topology_file: TopologyOption = DEFAULT_TOPOLOGY,
    overlay: Annotated[str | None, typer.Option(
        help="Overlay, or several separated by commas, run one after another "
             "(overrides the topology's).")] = None,
    pair: Annotated[str | None, typer.Option(
        help="The agents throughput measures, FROM,TO (the topology's measure).")] = None,
    baseline: Annotated[bool, typer.Option(
        help="As the seed, measure throughput's path without the overlay first.")] = True,
    vnet_image: Annotated[list[str] | None, typer.Option(
        help="vNet image per role, ROLE=IMAGE (or one IMAGE for all roles).")] = None,
    vnet_profile: Annotated[Path | None, typer.Option(
        help="vNet profile overrides (VNETBENCH_VNET_PROFILE).")] = None,
    out: Annotated[Path | None, typer.Option(help=OUT_HELP)] = None,
    engine: EngineOption = None,
    fault: Annotated[list[str] | None, typer.Option(
        help="failover: a fault to inject, KEY=VALUE,... as one entry of the topology's "
             "faults (repeatable; replaces them), e.g. kill=switch2,restart_after=3s or "
             "link=backbone,for=3s.")] = None,
    workload: Annotated[str | None, typer.Option(
        help="room: its load as phases and at-once events in place of room_rate, a "
             "workload file or a shipped profile's name (contest); replaces the "
             "topology's workload.")] = None,
    allow_failed: AllowFailedOption = False,
    slo: SloOption = None,
    as_json: JsonToStdout = False,
    json_file: JsonFile = None,
    **settings: Any,
) -> None:
    """Bring the topology up, run the scenarios' passes (or a reference method's
    steps), tear everything down. Exit 1 when a pass failed, its path was dead or a
    --slo target (else one of the topology's slo:, a venue's) was missed; with a room
    target, the venue's verdict comes first. --json/--json-file: the results directory, each cell's
    figures, the targets checked and the failed cells (the tables and each pass's
    line then go to stderr)."""
    from vnetbench.overlays.vnet.artifacts import with_vnet_options
    from vnetbench.runs.comparison import parse_overlays

    overrides = settings_given(settings)
    topology = with_vnet_options(read_topology(topology_file, overrides), vnet_image,
                                 vnet_profile)
    topology = with_faults(with_engine(with_pair(topology, pair), engine), fault)
    topology = with_workload(topology, workload)
    overlays = parse_overlays(overlay, topology.overlay)
    check_faults_injected(fault, scenarios or [], method)
    check_workload_used(workload, scenarios or [], method)
    check_not_overridden(topology, overrides)
    targets = run_targets(slo, scenarios or [], method, topology, str(topology_file))
    inputs = file_inputs(topology=topology_file, vnet_profile=vnet_profile, workload=workload)
    wanted = JsonWanted("run", as_json, json_file)
    if method is None:
        check_scenarios_named(scenarios or [], short)
    wanted.check(inputs)
    with people_on_stderr(as_json):
        if method is not None:
            directory = run_method_command(method, scenarios or [], topology, overlays,
                                           short, baseline, out, overrides, inputs)
            conclude(directory, allow_failed, wanted=wanted)
            return
        conclude(run_scenarios_command(scenarios or [], topology, overlays, baseline, out,
                                       inputs), allow_failed, targets, wanted,
                 print_comparison)


def check_scenarios_named(scenarios: list[str], short: bool) -> None:
    """Without --method: scenarios named, and no method's --short."""
    if short:
        raise UserError("--short is a reference method's short form; give --method NAME "
                        "with it, or shorten scenarios with --seconds and --passes.")
    if not scenarios:
        raise UserError(f"Name what to run: one or more scenarios ({SCENARIO_NAMES}), or a "
                        "reference method with --method NAME.")


def run_targets(slo: str | None, scenarios: list[str], method: str | None,
                topology: Topology | None = None, source: str = "") -> list[Target]:
    """--slo's targets, each on a scenario the run measures (a method's steps are its
    own: no target of a scenario applies to them); without --slo, the topology's
    `slo:` on the scenarios it runs (a venue's, topologies/venue.yml)."""
    from vnetbench.analysis.slo import check_scenarios, parse_targets
    from vnetbench.analysis.venue import check_moments, run_topology_targets

    if slo is None:
        if topology is None or not topology.slo or method is not None:
            return []
        targets, unchecked = run_topology_targets(topology.slo, topology.workload,
                                                  scenarios, source)
        if unchecked:
            note(f"{source}: slo: {', '.join(unchecked)} not checked: this run does not "
                 "run its scenario.")
        return targets
    if method is not None:
        raise UserError(f"--slo with --method {method}: a method's steps are its own "
                        "measurement, not the scenarios' cells a target names. Run the "
                        "scenarios by name with --slo, or drop --slo.")
    targets = parse_targets(slo)
    check_scenarios(targets, scenarios, "--slo", "this run")
    if topology is not None:
        check_moments(targets, topology.workload, f"--slo {slo}",
                      "Name a phase or event of the room's workload, or drop the target.")
    return targets


def check_faults_injected(faults: list[str] | None, scenarios: list[str],
                          method: str | None) -> None:
    """--fault names what a scenario injects: given to none that does, it would be
    silently ignored."""
    from vnetbench.scenarios import SCENARIOS, get_scenario

    if not faults:
        return
    injecting = [name for name, scenario in SCENARIOS.items() if scenario.injects_faults]
    if method is None and any(get_scenario(name).injects_faults for name in scenarios):
        return
    given = f"--method {method}" if method else " ".join(scenarios) or "no scenario"
    raise UserError(f"--fault {' --fault '.join(faults)}: {given} injects no faults, so it "
                    f"would be ignored. Run {' or '.join(injecting)} with --fault, or leave "
                    "--fault out.")


WORKLOAD_OVERRIDES = {"room_rate": "its phases' rates", "room_sizes": "its phases' sizes"}


def check_not_overridden(topology: Topology, given: Mapping[str, object]) -> None:
    """An option the room's workload replaces would be silently ignored: refused."""
    workload = topology.workload
    if workload is None:
        return
    replaced = {name: why for name, why in WORKLOAD_OVERRIDES.items() if name in given}
    if workload.timeout_s and "room_timeout_s" in given:
        replaced["room_timeout_s"] = f"its own timeout_s ({workload.timeout_s} s)"
    if replaced:
        options = ", ".join(f"--{name.replace('_', '-')} {option_text(given[name])}"
                            for name in replaced)
        raise UserError(f"{options}: the room's workload ({workload.name or 'unnamed'}) runs "
                        f"with {' and '.join(replaced.values())} in its place, so it would be "
                        "ignored. Leave it out, or change the workload.")


def option_text(value: object) -> str:
    """A setting's value as its option takes it: (200, 2048) -> '200,2048'."""
    return ",".join(map(str, value)) if isinstance(value, tuple | list) else f"{value:g}" \
        if isinstance(value, float) else str(value)


def check_workload_used(workload: str | None, scenarios: list[str],
                        method: str | None) -> None:
    """--workload is a scenario's load (the room's): given to a run of none that runs
    one, it would be silently ignored."""
    from vnetbench.scenarios import SCENARIOS, get_scenario

    if workload is None:
        return
    if method is None and any(get_scenario(name).runs_workload for name in scenarios):
        return
    running = [name for name, scenario in SCENARIOS.items() if scenario.runs_workload]
    given = f"--method {method}" if method else " ".join(scenarios) or "no scenario"
    raise UserError(f"--workload {workload}: {given} runs no workload, so it would be "
                    f"ignored. Run {' or '.join(running)} with --workload, or leave "
                    "--workload out.")


def run_scenarios_command(scenarios: list[str], topology: Topology, overlays: list[str],
                          baseline: bool, out: Path | None,
                          inputs: Sequence[Input] = ()) -> Path:
    """`run SCENARIO...`: each overlay's passes; its directory (conclude prints the
    comparison table, after a venue's verdict)."""
    from vnetbench.runs.comparison import run_overlays
    from vnetbench.scenarios import get_scenario

    chosen = [get_scenario(name) for name in scenarios]
    for name in overlays:  # every overlay's stacks, before the first one starts
        for scenario in chosen:
            scenario.check(topology.model_copy(update={"overlay": name}))
    results = out_directory(out, command="run", inputs=inputs)
    directory = run_overlays(topology, overlays, chosen, results, baseline)
    note(f"results: {directory}")
    return directory


def print_comparison(frame: pd.DataFrame) -> None:
    """The run's comparison table (a row per metric, a column per overlay)."""
    from vnetbench.report.tables import comparison_table

    table = comparison_table(frame) if not frame.empty else None
    if table is not None and not table.empty:
        out_console.print(rich_table(table))


def run_method_command(name: str, scenarios: list[str], topology: Topology,
                       overlays: list[str], short: bool, baseline: bool,
                       out: Path | None, given: Mapping[str, object],
                       inputs: Sequence[Input] = ()) -> Path:
    """`run --method NAME`: its steps on each overlay, its table, report.md (the
    directory returned); the options given (--passes, --seconds...) above the method's
    own settings."""
    from vnetbench.analysis.results import load_results
    from vnetbench.methods import get_method
    from vnetbench.report.markdown import build_report
    from vnetbench.report.tables import method_table
    from vnetbench.runs.method import run_method

    if scenarios:
        raise UserError(f"--method {name} sets the measurement itself; drop the scenario "
                        f"names ({' '.join(scenarios)}) or the --method option.")
    method = get_method(name)
    results = out_directory(out, command="run", inputs=inputs)
    directory = run_method(topology, method, overlays, results, short, baseline,
                           dict(given))
    out_console.print(f"{method.name} ({method.reference}):")
    out_console.print(rich_table(method_table(load_results(directory), method, compact=True)))
    report_path, _ = build_report(directory)
    note(f"results: {directory}; report: {report_path}")
    return directory
