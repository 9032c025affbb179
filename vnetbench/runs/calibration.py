"""The machine's limits and the testbed's own cost, measured in one run.

`vnetbench calibrate` (and `make perf`, with --scale) measures, on this machine
and in this order: a bare veth pair between two namespaces (the physical limit
here), the two-site shape of bare namespaces at N = 20 and 50 (200 with
--scale) beside vnetbench's own stacks of the same shape and N (each as a ratio
against its target: measure/bare.py, runs/targets.py), the baseline path as
vnetbench runs it (agent, router, router, agent), and that path in rounds beside
the bare one with the engine's own rules (path_rounds: the TCP target of issue #63),
the delay line's own latency and the error of a 10 ms delay each way, the host
CPU that an idle 50-agent topology costs; with --scale, the time to bring up and
tear down 200 agents (the engine's events beside vnetbench's steps: where the
seconds go), a join pass's restart on kept containers against a
stack per pass, and (with vNet images) rooms of 200 and 800 vNet agents up and
joined. Each figure is printed against its target, and the whole table is kept
in calibration.json of the run's directory.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from vnetbench.analysis.results import load_results
from vnetbench.analysis.runrecord import read_record
from vnetbench.core.outcome import State
from vnetbench.declared.declaration import JOIN_ROLE, PATH_ROLE
from vnetbench.deploy.lifecycle import StackSpec, prepare, running
from vnetbench.engines import Engine, EngineEvent, HostRuntime, ToolSpec, require_engine
from vnetbench.engines.allocation import claimed_block
from vnetbench.engines.base import Mount
from vnetbench.files import write_text_atomic
from vnetbench.measure.bare import (
    READ_RULES,
    TESTBED_ROUND,
    BarePath,
    BareShape,
    bare_paths,
    bare_round,
    bare_shape,
    parse_rounds,
    rules_commands,
)
from vnetbench.measure.cpu import host_sample
from vnetbench.measure.engine_events import breakdown, breakdown_lines, of_project
from vnetbench.measure.engine_floor import (
    EngineFloorError,
    FloorTiming,
    compose_services,
    engine_floor,
)
from vnetbench.measure.veth import bare_rates
from vnetbench.model.topology import Topology, parse_topology
from vnetbench.overlays import overlay_for
from vnetbench.runs.session import run_scenarios
from vnetbench.runs.targets import (
    DOWN_TARGET,
    TARGET_N,
    UP_TARGET,
    Figure,
    PathRound,
    StackTiming,
    figure_rows,
    floor_figures,
    stack_timing,
    timing_figures,
    without_nan,
)
from vnetbench.runs.targets import (
    path_figures as against_bare_path,
)
from vnetbench.runtime.gate import (
    ENTRY,
    FIFO_IN_CONTAINER,
    MOUNT_POINT,
    gate_spread,
    prepare_gate,
    release,
    release_stamp,
)
from vnetbench.runtime.images import TOOLS_IMAGE, ImageSet
from vnetbench.runtime.interrupts import shielded, teardown_guard
from vnetbench.runtime.labels import (
    current_owner,
    project_name,
    run_filter,
    run_labels,
)
from vnetbench.runtime.rundir import new_directory, new_run_id, stamp
from vnetbench.scenarios import scenario_playing
from vnetbench.terminal.ui import note, waiting

__all__ = ["Figure", "calibrate", "figure_rows"]

IDLE_AGENTS = 50
SCALE_CONTAINERS = 200
SHAPE_SIZES = (20, IDLE_AGENTS)  # N of the two-site shape, bare and vnetbench; --scale: 200
GATE_STARTERS = 4  # concurrent docker calls when starting or reading the gate's containers
SAMPLE_SECONDS = 10.0
SETTLE_SECONDS = 5.0  # after bring-up, before the idle sample: start-up work ends
DELAY_MS = 10.0  # each way on the backbone, for the delay line's error
# ...at a rate a delay line carries: the pass's TCP stream at no rate is more than one
# line can (59,244 packets in 5 s, 90 % of them over 1 ms late, 2026-12-07), and the
# pass fails on it (docs/topologies.md, "Shaped links")
DELAY_RATE = "100mbit"
# the path and the joins are measured by the scenarios playing these roles, by the
# metrics the roles name (vnetbench/declared/declaration.py), never a scenario's name
RATE, RTT = PATH_ROLE.metrics
JOIN_SECONDS, JOINED, RESTART_SECONDS = JOIN_ROLE.metrics


def calibrate(runtime: HostRuntime, out_dir: Path, seconds: float = 5.0, passes: int = 3,
              scale: bool = False, rounds: int | None = None,
              idle_seconds: float = SAMPLE_SECONDS) -> tuple[Path, list[Figure]]:
    """Measure every figure on this machine's engine (`runtime`) into a new directory
    under out_dir; return both."""
    require_engine()
    images = runtime.project_images()
    # absolute: the gate directory is bind-mounted (a relative path names a volume)
    directory = new_directory(out_dir.resolve(), f"calibrate-{stamp()}")
    figures: list[Figure] = []
    extra: dict[str, Any] = {}  # the breakdown of the bring-up and teardown at scale

    def keep(*found: Figure) -> None:
        figures.extend(map(without_nan, found))
        write_text_atomic(directory / "calibration.json", as_json(figures, extra))

    sizes = [*SHAPE_SIZES, *([TARGET_N] if scale else [])]
    with waiting(f"bare namespaces in the two-site shape, N = {sizes}", 30 + seconds * 2):
        bare = bare_shape(runtime, directory.name, sizes, seconds, pings=200)
    raw = bare_figure(runtime, directory.name, seconds, passes, 0, "raw veth pair (TCP)",
                      "the machine's limit: one veth pair, nothing else")
    routed = bare_figure(runtime, directory.name, seconds, passes, 2,
                         "bare routed path (TCP)",
                         "agent, router, router, agent on veth pairs: no bridge, no "
                         "netfilter")
    keep(raw, routed, *bare_shape_figures(bare))
    path, plain_rtt = path_figures(directory, seconds, passes, raw.value, routed.value)
    keep(*path)
    delay = delay_figures(directory, plain_rtt)
    keep(*delay)
    ups: dict[int, float] = {}
    downs: dict[int, float] = {}
    stacks: dict[int, StackTiming] = {}
    floors: dict[int, FloorTiming | None] = {}

    def floor_beside(n: int, timings: dict[str, Any]) -> None:
        """vnetbench's stack of n agents, then the engine's floor of as many containers."""
        ups[n], downs[n] = timings["up"], timings["down"]
        stacks[n] = timings["stack"]
        floors[n] = measured_floor(runtime, directory, images, stacks[n].containers)
        keep(*floor_figures(n, stacks[n], floors[n], n == TARGET_N))

    with brought_up(many_agents("calibrate-shape20", SHAPE_SIZES[0]), directory,
                    images) as timings:
        pass
    floor_beside(SHAPE_SIZES[0], timings)
    idle, timings = idle_figures(directory, images, idle_seconds)
    keep(*idle)
    floor_beside(IDLE_AGENTS, timings)
    why_up = why_down = ""
    if scale:
        found, timings = scale_figures(runtime, directory, images)
        floor_beside(TARGET_N, timings)
        if timings.get("breakdown"):
            extra["breakdown"] = timings["breakdown"]
            why_up, why_down = reasons(timings["breakdown"])
        keep(*found)
    extra["engine_floor"] = [asdict(f) for f in floors.values() if f is not None]
    keep(*timing_figures("bring-up", ups, bare.up_s, UP_TARGET, why_up),
         *timing_figures("teardown", downs, bare.down_s, DOWN_TARGET, why_down))
    measured = path_rounds(runtime, directory, images, seconds, rounds or PATH_ROUNDS)
    extra["path_rounds"] = [asdict(r) for r in measured]  # every round, as measured
    keep(*against_bare_path(measured))
    return directory, figures


def bare_shape_figures(bare: BareShape) -> list[Figure]:
    """The bare namespaces' own figures: bring-up and teardown per N, the path."""
    figures = [Figure(f"bare namespaces: bring-up of {n} hosts", seconds, "s",
                      note="two sites, two routers, a backbone: namespaces, veth pairs, "
                      "Linux bridges")
               for n, seconds in sorted(bare.up_s.items())]
    figures += [Figure(f"bare namespaces: teardown of {n} hosts", seconds, "s",
                       note=f"every link gone after {bare.gone_s.get(n, 0):.2f} s")
                for n, seconds in sorted(bare.down_s.items())]
    for variant, path in sorted(bare.paths.items()):
        figures += [Figure(f"bare two-router path RTT, {variant}", path.rtt_mean_ms, "ms",
                           note="mean of 200 pings 10 ms apart"),
                    Figure(f"bare two-router path TCP, {variant}", path.tcp_mbit, "Mbit/s",
                           note="one iperf3 stream")]
    return figures


PATH_ROUNDS = 8  # rounds of the two-router paths in turn (--rounds): 6 or more give a 95 % interval
ROUND_SECONDS = 3  # each round's TCP stream per path (or --seconds, the less)
ROUND_PINGS = 100  # each round's pings per path, 10 ms apart
ROUND_PORT = 5299  # the iperf3 server kept in vnetbench's second agent for the rounds


def path_rounds(runtime: HostRuntime, directory: Path, images: ImageSet, seconds: float,
                count: int) -> list[PathRound]:
    """The two-router path as vnetbench runs it (one stack for every round) and the
    bare ones (one helper: the bridges' netfilter off; on with the engine's rules read
    from that stack's agent and router), measured in turn while all are up, the first
    of each round alternating; each path's pings, then its TCP (one stream). Every
    round's output is kept in path-rounds.txt."""
    topology = two_sites("calibrate-rounds", seconds, 1, pings=ROUND_PINGS)
    stream = max(1, min(ROUND_SECONDS, int(seconds)))
    outputs: list[str] = []
    orders: dict[int, tuple[str, ...]] = {}
    with brought_up(topology, directory, images) as timings:
        run_id = timings["run_id"]
        prepared, stack = timings["where"]
        # agent1 on the first site, agent2 on the second: both routers between them
        source, target = (stack.container(prepared.topology.container_of(agent))
                          for agent in ("agent1", "agent2"))
        address = prepared.overlay.target_address(prepared.topology, stack.rendered.plan,
                                                  "agent2")
        router = min(c.name for c in stack.containers("switch"))  # the first site's router
        saved = {name: read_rules(runtime, run_id, name) for name in (source, router)}
        commands = rules_commands(saved[source], saved[router])
        if not commands:
            note("the engine's rules (DOCKER_ chains) were not found in vnetbench's agent "
                 "or router: no bare path with them, no figure against it", style="yellow")
        variants = ["rules", "off"] if commands else ["off"]
        server = f"{run_id}-rounds-server"
        runtime.start_tool(target, ToolSpec(
            ("iperf3", "-s", "-p", str(ROUND_PORT)), run_labels(run_id, "probe", target),
            name=server))
        try:
            with bare_paths(runtime, directory.name, commands) as helper:
                for number in range(1, count + 1):
                    first = number % 2 == 1  # vnetbench's path first in odd rounds
                    bare = variants if first else variants[::-1]
                    orders[number] = ("vnetbench", *bare) if first else (*bare, "vnetbench")
                    with waiting(f"the two-router paths in turn, round {number} of {count}",
                                 len(orders[number]) * (stream + 2)):
                        for path in orders[number]:
                            if path == "vnetbench":
                                outputs.append(testbed_round(runtime, source, run_id,
                                                             address, number, stream))
                            elif path == bare[0]:
                                outputs.append(bare_round(runtime, helper, number, stream,
                                                          ROUND_PINGS, bare))
        finally:
            with shielded():
                runtime.remove(server)
    text = "\n".join(outputs)
    write_text_atomic(directory / "path-rounds.txt", text + "\n")
    return as_rounds(text, orders)


def as_rounds(text: str, orders: dict[int, tuple[str, ...]]) -> list[PathRound]:
    """The rounds' output (bare.parse_rounds) as PathRounds, in the rounds' order."""
    found = parse_rounds(text)
    missing = BarePath(None, None)

    def pair(number: int, variant: str) -> tuple[float | None, float | None]:
        path = found.get(number, {}).get(variant, missing)
        return path.rtt_mean_ms, path.tcp_mbit

    return [PathRound(pair(number, "vnetbench"), pair(number, "off"),
                      bare_rules=pair(number, "rules"), order=order)
            for number, order in sorted(orders.items())]


def read_rules(runtime: HostRuntime, run_id: str, container: str) -> str:
    """The iptables-save of a container's namespace, from a probe joined to it."""
    return runtime.run_tool(container, ToolSpec(
        ("sh", "-c", READ_RULES), run_labels(run_id, "probe", container),
        capabilities=("NET_ADMIN",))).stdout


def testbed_round(runtime: HostRuntime, agent: str, run_id: str, address: str, number: int,
                  seconds: int) -> str:
    """One round of vnetbench's path from a probe in its first agent (as its passes
    measure it), to the server kept in the second: its marked output."""
    return runtime.run_tool(agent, ToolSpec(
        ("sh", "-c", TESTBED_ROUND, "testbed-round", address, str(number), str(seconds),
         str(ROUND_PINGS), str(ROUND_PORT)), run_labels(run_id, "probe", agent))).stdout


def reasons(found: dict[str, Any]) -> tuple[str, str]:
    """Why a bring-up or teardown takes what it takes: the breakdown's longest parts."""
    steps = {row["step"]: row["seconds"] for row in found.get("steps", [])}

    def span(part: str, phase: str) -> str:
        for row in found.get(part, []):
            if row["phase"] == phase:
                return f"{phase} {row['first_s']:.1f}-{row['last_s']:.1f} s"
        return f"{phase}: none seen"

    up = (f"measured: compose up {steps.get('up', 0):.1f} s of which the engine's "
          f"{span('bring_up', 'containers created')}, "
          f"{span('bring_up', 'containers started')}, "
          f"{span('bring_up', 'health checks passed')} (servers'; agents by their marks); "
          f"shape {steps.get('shape', 0):.1f} s")
    down = (f"measured: save logs {steps.get('save logs', 0):.1f} s, remove "
            f"{steps.get('remove', 0):.1f} s ({span('teardown', 'containers removed')}, "
            f"{span('teardown', 'networks removed')})")
    return up, down


def bare_figure(runtime: HostRuntime, run_id: str, seconds: float, passes: int,
                routers: int, name: str, what: str) -> Figure:
    rates = bare_rates(runtime, run_id, seconds, passes, routers)
    return Figure(name, statistics.median(rates), "Mbit/s",
                  note=f"median of {passes}: {spread(rates)}; {what}")


def measured_passes(run_dir: Path) -> tuple[Any, str]:
    """The run's rows of the passes that measured (ok, partial), and what the others said
    (a failed pass's figures are no measurement: a delay line that ran behind, say)."""
    frame = load_results(run_dir)
    kept = frame["state"].isin([state.value for state in State if state.measured])
    said = "; ".join(sorted(set(frame.loc[~kept, "status"].astype(str))))
    return frame[kept], said


def unmeasured(said: str) -> str:
    return f"; not measured: {said[:400]}" if said else ""


def path_figures(directory: Path, seconds: float, passes: int, raw_mbit: float | None,
                 routed_mbit: float | None) -> tuple[list[Figure], float | None]:
    """The baseline path as vnetbench runs it, against the raw pair (the target) and
    against the same path without the testbed (what the bridges and the engine's
    bridge netfilter cost; the rest is the path's own routing); and its RTT, the
    unshaped reference of the delay line's error (200 pings each pass, as the shaped
    run's: one stack for both, where the reference had a stack of its own)."""
    topology = two_sites("calibrate-path", seconds, passes, pings=200)
    run_dir = run_scenarios(topology, [scenario_playing(PATH_ROLE)], directory / "runs")
    frame, said = measured_passes(run_dir)
    rtts = frame[frame["metric"] == RTT]["value"].dropna()
    rates = frame[frame["metric"] == RATE]["value"].dropna().tolist()
    path = statistics.median(rates) if rates else None
    ratio = path / raw_mbit if path and raw_mbit else None
    testbed = path / routed_mbit if path and routed_mbit else None
    return [
        Figure("baseline path (TCP)", path, "Mbit/s", note=f"median of {len(rates)}: "
               f"{spread(rates)}; agent, router, router, agent on Docker bridges"
               f"{unmeasured(said)}"),
        Figure("baseline path / raw veth", ratio, "ratio", ">= 0.90",
               None if ratio is None else ratio >= 0.90,
               "below it: Docker's bridges and the bridge netfilter the engine turns on "
               "host-wide (the next line isolates them; docs/cost.md: where the gap goes)"),
        Figure("baseline path / bare routed path", testbed, "ratio",
               note="below 1: the cost of Docker bridges and the engine's bridge netfilter"),
    ], (float(rtts.median()) if len(rtts) else None)


def delay_figures(directory: Path, plain_rtt: float | None) -> list[Figure]:
    """The delay line's own latency (subtracted from each delay) and what is left of
    the error on a 10 ms delay each way, against the same path unshaped (`plain_rtt`,
    the path run's just before)."""
    shaped = two_sites("calibrate-delay", 1, 1, pings=200,
                       backbone={"delay": f"{DELAY_MS:g}ms", "rate": DELAY_RATE})
    path = scenario_playing(PATH_ROLE)
    run_dir = run_scenarios(shaped, [path], directory / "runs")
    frame, said = measured_passes(run_dir)
    rtts = [math.nan if plain_rtt is None else plain_rtt,
            frame[frame["metric"] == RTT]["value"].median()]
    applied = read_record(run_dir).links.applied.get(path.name, {})
    overheads = [node["delay_line_overhead_us"] for node in applied.values()
                 if isinstance(node, dict) and "delay_line_overhead_us" in node]
    error = rtts[1] - rtts[0] - 2 * DELAY_MS
    bound = 2 * (0.5 + 0.05 * DELAY_MS)
    figures = [Figure(f"{DELAY_MS:g} ms each way: added RTT - {2 * DELAY_MS:g} ms", error, "ms",
                      f"within +-{bound:g}", abs(error) <= bound,
                      f"mechanism: {applied.get('mechanism', 'none')}{unmeasured(said)}")]
    if overheads:
        figures.append(Figure("delay line's own latency (subtracted)",
                              statistics.median(overheads), "us",
                              note=f"per shaped container: {spread(overheads)}"))
    plain_rtt = None if rtts[0] != rtts[0] else float(rtts[0])  # NaN: none measured
    figures.append(Figure("baseline path RTT (mean)", plain_rtt, "ms",
                          note="200 pings 10 ms apart, agent to agent over both routers"))
    return figures


def idle_figures(directory: Path, images: ImageSet, seconds: float = SAMPLE_SECONDS
                 ) -> tuple[list[Figure], dict[str, Any]]:
    """What an idle topology costs: the testbed's own CPU (every container's cgroup and
    the engine's daemons, measure/cpu.py) with it up against the same with nothing up;
    the whole host's difference beside it, which also holds what other processes do
    about it (a monitor that scans /proc works longer with 53 more containers'
    processes: 1.6 % of a core here, measured per process)."""
    idle = idle_sample(seconds, "the idle host")
    topology = many_agents("calibrate-idle", IDLE_AGENTS)
    with brought_up(topology, directory, images) as timings:
        time.sleep(SETTLE_SECONDS)
        busy = idle_sample(seconds, f"{IDLE_AGENTS} idle agents")
    cost = busy.testbed - idle.testbed
    return [
        Figure("idle host CPU", idle.host, "% of a core", note=f"{seconds:g} s sample"),
        Figure(f"idle cost of a {IDLE_AGENTS}-agent topology", cost, "% of a core", "< 2",
               cost < 2, f"its containers and the engine's daemons: {busy.testbed:.2f} % "
               f"with it up, {idle.testbed:.2f} % without; up in {timings['up']:.1f} s"),
        Figure(f"the whole host with a {IDLE_AGENTS}-agent topology idle", busy.host - idle.host,
               "% of a core", note=f"{busy.host:.1f} % with it up, {idle.host:.1f} % "
               "without: the testbed's own and what the host's other processes spent "
               "meanwhile"),
    ], timings


@dataclass(frozen=True)
class IdleSample:
    """% of a core over a sample: the whole host, and the testbed's own part of it."""

    host: float
    testbed: float


def idle_sample(seconds: float, what: str) -> IdleSample:
    with waiting(f"host CPU of {what} ({seconds:g} s)", seconds):
        before = host_sample()
        time.sleep(seconds)
        after = host_sample()
    elapsed = after.at - before.at
    testbed = (after.testbed_since(before)
               + ((after.containers_s or 0.0) - (before.containers_s or 0.0)))
    return IdleSample(100 * (after.tasks_s - before.tasks_s) / elapsed,
                      100 * testbed / elapsed)


def scale_figures(runtime: HostRuntime, directory: Path, images: ImageSet
                  ) -> tuple[list[Figure], dict[str, Any]]:
    """The two-site shape with TARGET_N agents (two routers and the fabric helper
    besides), its bring-up and teardown broken down (the engine's events)."""
    topology = many_agents("calibrate-scale", TARGET_N)
    with brought_up(topology, directory, images, watch=True) as timings:
        pass
    containers = TARGET_N + 3
    return [
        gate_figure(runtime, directory, SCALE_CONTAINERS),
        Figure(f"bring-up of {TARGET_N} agents ({containers} containers)", timings["up"],
               "s", "< 30", timings["up"] < 30,
               "baseline: routers and agents ready (routers by their health check, agents "
               "by their mark)"),
        Figure(f"teardown of {TARGET_N} agents ({containers} containers)", timings["down"],
               "s", "< 15", timings["down"] < 15,
               "logs saved, then everything removed by label"),
        *kept_container_figures(directory),
        *vnet_join_figures(directory),
    ], timings


def join_run(directory: Path, name: str, overlay: str, machines: int, passes: int,
             pool: int | None = None) -> tuple[Any, dict[str, Any]]:
    """A join run: its results frame and its stack's timings (one stack)."""
    settings = {"machines": machines, "passes": passes, "join_pool": pool}
    topology = parse_topology({"name": name, "overlay": overlay, "switches": 2, "agents": 2,
                               "settings": {k: v for k, v in settings.items() if v}},
                              "calibration")
    run_dir = run_scenarios(topology, [scenario_playing(JOIN_ROLE)], directory / "runs")
    return load_results(run_dir), read_record(run_dir).timings[0]


def pass_value(frame: Any, pass_no: int, metric: str) -> float | None:
    found = frame[(frame["pass"] == pass_no) & (frame["metric"] == metric)]["value"].dropna()
    return float(found.iloc[0]) if len(found) else None


def kept_container_figures(directory: Path) -> list[Figure]:
    """What a join pass costs the testbed on kept containers (programs stopped and
    started again) against a stack per pass (bring-up and teardown): WireGuard,
    which every machine has, 50 clients in their own containers."""
    frame, timing = join_run(directory, "calibrate-join-kept", "wireguard", 50, 2)
    restart = pass_value(frame, 2, RESTART_SECONDS)
    fresh = timing["bring_up_s"] + timing["teardown_s"]
    ratio = restart / fresh if restart is not None and fresh else None
    joined = pass_value(frame, 2, JOINED)
    return [Figure("join pass on kept containers: programs started again", restart, "s",
                   note=f"50 WireGuard clients; {joined or 0:.0f} joined again"),
            Figure("its cost against a stack per pass (bring-up + teardown)", ratio, "ratio",
                   note=f"{fresh:.1f} s for a stack of the same 54 containers")]


def vnet_join_figures(directory: Path) -> list[Figure]:
    """Rooms of vNet agents up and joined (bring-up, then the first pass's join), one
    container each and in pools, when vNet images are here."""
    rooms = (("200 one-container vNet agents up and joined", 200, 1),
             ("800 pooled vNet agents up and joined", 800, None))
    missing = overlay_for(many_agents("calibrate-vnet", 2), "vnet").unavailable_reason()
    if missing:
        return [Figure(name, None, "s", "< 30", None, f"not measured: {missing}")
                for name, _, _ in rooms]
    figures = []
    for name, machines, pool in rooms:
        frame, timing = join_run(directory, f"calibrate-vnet{machines}", "vnet", machines,
                                 1, pool)
        join = pass_value(frame, 1, JOIN_SECONDS)
        total = timing["bring_up_s"] + join if join is not None else None
        figures.append(Figure(
            name, total, "s", "< 30", None if total is None else total < 30,
            f"bring-up {timing['bring_up_s']:.1f} s + join {join or 0:.1f} s; joined "
            f"{pass_value(frame, 1, JOINED) or 0:.0f} of {machines} (pools of "
            f"{frame['set_pool'].iloc[0]:.0f})"))
    return figures


def measured_floor(runtime: HostRuntime, directory: Path, images: ImageSet,
                   containers: int) -> FloorTiming | None:
    """The engine's floor for as many containers as vnetbench's stack had (None, said,
    when the sleeping containers themselves could not come up)."""
    with waiting(f"the engine's floor: {containers} sleeping containers up and removed",
                 containers * 0.15):
        try:
            return engine_floor(runtime, directory / "engine-floor",
                                new_run_id(f"floor{containers}"), containers, images.tools,
                                many_agents("calibrate-floor", 2))
        except EngineFloorError as error:
            note(f"{error}; the ratios to the engine's floor are not measured", style="yellow")
            return None


def gate_figure(runtime: HostRuntime, directory: Path, containers: int) -> Figure:
    """The start gate's own spread: `containers` waiting at one gate (the tools image
    with no network, behind the entry wrapper), released at once; the spread is
    between the first and last release stamp each took with bash's own clock."""
    run_id = new_run_id("calibrate-gate")
    gate_dir = prepare_gate(directory / "gate")

    def start_waiting(index: int) -> None:
        runtime.start_helper(ToolSpec(
            ("sleep", "infinity"), run_labels(run_id, "gate", str(index)), image=TOOLS_IMAGE,
            name=f"{run_id}-{index}", entrypoint=ENTRY, network="none",
            environment={"VNETBENCH_GATE": FIFO_IN_CONTAINER},
            mounts=(Mount(gate_dir, MOUNT_POINT),), init=True, keep=True))

    with teardown_guard():  # SIGTERM and SIGHUP too reach the `finally`
        try:
            with waiting(f"{containers} containers to the start gate", containers * 0.15), \
                    ThreadPoolExecutor(GATE_STARTERS) as starters:
                list(starters.map(start_waiting, range(containers)))
                deadline = time.monotonic() + 120
                while (gate_logs(runtime, run_id, "vnetbench-gate waiting") < containers
                       and time.monotonic() < deadline):
                    time.sleep(0.5)
            release(gate_dir)
            time.sleep(1.0)
            with ThreadPoolExecutor(GATE_STARTERS) as readers:
                logs = readers.map(lambda c: runtime.logs(c.id),
                                   runtime.containers(run_filter(run_id)))
                stamps = {str(i): release_stamp(text) for i, text in enumerate(logs)}
            spread = gate_spread(stamps)
        finally:
            with shielded():
                runtime.remove_run(run_id)
    value = spread.spread_ms
    return Figure(f"start gate spread, {containers} containers", value, "ms", "< 20",
                  None if value is None else value < 20,
                  f"{spread.released} released, {spread.waiting} never left the gate; one "
                  f"wake-up releases all, then {os.cpu_count()} cores run each one's stamp, "
                  "log line and program start in turn")


def gate_logs(engine: Engine, run_id: str, text: str) -> int:
    """How many of the run's containers have `text` in their log."""
    with ThreadPoolExecutor(GATE_STARTERS) as readers:
        found = readers.map(lambda c: text in engine.logs(c.id),
                            engine.containers(run_filter(run_id)))
        return sum(found)


@contextmanager
def brought_up(topology: Topology, directory: Path, images: ImageSet, watch: bool = False
               ) -> Iterator[dict[str, Any]]:
    """A topology up for the `with` block; timings['up'] and, after it, ['down'];
    `watch`: ['breakdown'] too, the engine's events beside vnetbench's steps."""
    prepared = prepare(topology, overlay_for(topology), images=images)
    timings: dict[str, Any] = {}
    with claimed_block() as claim:
        spec = StackSpec(prepared, new_run_id(topology.name), directory / topology.name,
                         current_owner())
        with watched(prepared.engine if watch else None) as seen:
            started = time.monotonic()
            with running(spec, claim) as stack:
                timings["up"] = time.monotonic() - started
                timings["run_id"] = spec.run_id  # what a measurement beside it needs
                timings["where"] = (prepared, stack)
                containers = compose_services(stack.rendered.compose_file)
                yield timings
                stopping = time.monotonic()
            timings["down"] = time.monotonic() - stopping
            timings["stack"] = stack_timing(spec.steps, containers, timings)
            if watch:
                time.sleep(1.0)  # the last events reach the stream
        if watch:
            events = of_project(seen, project_name(spec.run_id))
            timings["breakdown"] = breakdown(events, spec.steps)
            write_text_atomic(directory / f"{topology.name}-events.jsonl",
                              "".join(json.dumps(asdict(event)) + "\n" for event in seen))
            for line in breakdown_lines(timings["breakdown"]):
                note(f"{topology.name}: {line}", style="dim")


@contextmanager
def watched(engine: Engine | None) -> Iterator[list[EngineEvent]]:
    """The engine's events (as they come) for the `with` block; none without one."""
    seen: list[EngineEvent] = []
    if engine is None:
        yield seen
        return
    stream = engine.watch_events()

    def read() -> None:
        for event in stream:
            seen.append(event)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    time.sleep(0.5)  # the stream is open before anything happens
    try:
        yield seen
    finally:
        stream.close()
        reader.join(timeout=5)


def two_sites(name: str, seconds: float, passes: int, pings: int = 100,
              backbone: dict[str, str] | None = None) -> Topology:
    return parse_topology({"name": name, "overlay": "baseline", "switches": 2, "agents": 2,
                           "links": {"backbone": backbone or {}},
                           "settings": {"seconds": seconds, "passes": passes, "pings": pings,
                                        "ping_interval_ms": 10}}, "calibration")


def many_agents(name: str, agents: int, switches: int = 2) -> Topology:
    return parse_topology({"name": name, "overlay": "baseline", "switches": switches,
                           "agents": agents}, "calibration")


def spread(values: list[float]) -> str:
    return f"{min(values):.1f}-{max(values):.1f}" if values else "none"


def as_json(figures: list[Figure], extra: dict[str, Any] | None = None) -> str:
    # medians of frames are numpy scalars: .item() gives the plain number or bool
    return json.dumps({"figures": [asdict(f) for f in figures], **(extra or {})}, indent=2,
                      default=lambda value: value.item()) + "\n"
