"""A run: allocate, render, bring up, measure pass by pass, always tear down.

Everything goes under one run directory: compose.yml, raw tool output,
container logs, results.{parquet,csv,txt} and run.json.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from ipaddress import IPv4Network
from pathlib import Path
from typing import Any

from python_on_whales import docker

from vnetbench.addressing import free_block
from vnetbench.engine import require_engine
from vnetbench.images import ImageSet, build_project_images
from vnetbench.metadata import FORMAT_VERSION, host_facts, now_iso
from vnetbench.overlays import get_overlay
from vnetbench.render import RenderedRun, render_run
from vnetbench.results import ResultSet, result_line
from vnetbench.scenarios import Scenario, ScenarioContext
from vnetbench.stack import running
from vnetbench.topology import Topology
from vnetbench.ui import note, out_console, step_done

RUN_FILE = "run.json"


def new_run_id(topology: Topology) -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    return f"{topology.name}-{stamp}-{secrets.token_hex(2)}"


def used_subnets() -> list[IPv4Network]:
    subnets = []
    for network in docker.network.list():
        for config in network.ipam.config or []:
            subnet = config.get("Subnet") or config.get("subnet")
            if subnet and ":" not in subnet:
                subnets.append(IPv4Network(subnet))
    return subnets


@dataclass
class RunRecord:
    """run.json: what ran, where, with what, and how it ended."""

    path: Path
    data: dict[str, Any]

    def save(self) -> None:
        self.path.write_text(json.dumps(self.data, indent=2, default=str) + "\n")


def link_record(topology: Topology) -> dict[str, Any]:
    """What run.json says of link shaping: declared profiles are not applied yet."""
    declared = {name: profile.model_dump(mode="json")
                for name, profile in (("site", topology.links.site),
                                      ("backbone", topology.links.backbone))
                if profile.is_shaped}
    if declared:
        note("[yellow]warning: this topology declares shaped links, but this version of "
             "vnetbench does not apply link shaping yet: links run unshaped[/]")
    return {"declared": declared, "applied": {}}


def prepare_run(topology: Topology, out_dir: Path, images: ImageSet) -> RenderedRun:
    run_id = new_run_id(topology)
    block = free_block(used_subnets())
    return render_run(topology, run_id, block, out_dir / run_id, images)


def start_record(rendered: RenderedRun, topology: Topology, images: ImageSet,
                 scenarios: list[Scenario]) -> RunRecord:
    record = RunRecord(rendered.directory / RUN_FILE, {
        "format_version": FORMAT_VERSION,
        "run_id": rendered.run_id,
        "started": now_iso(),
        "ended": None,
        "status": "running",
        **host_facts(images.tools),
        "overlay": {"name": topology.overlay,
                    "data_path": get_overlay(topology.overlay).data_path},
        "scenarios": [s.name for s in scenarios],
        "address_block": str(rendered.plan.block),
        "networks": {n.key: {"subnet": str(n.subnet), "bridge": n.bridge}
                     for n in rendered.plan.networks},
        "topology": topology.model_dump(mode="json"),
        "links": link_record(topology),
    })
    record.save()
    return record


def run_scenarios(topology: Topology, scenarios: list[Scenario], out_dir: Path,
                  results: ResultSet | None = None) -> Path:
    """Run each scenario's passes on one stack; return the run directory.

    Rows go to `results` when given (the matrix's shared set), else to a
    result set in the run directory.
    """
    for scenario in scenarios:
        scenario.check(topology)
    require_engine()
    images = build_project_images()
    overlay = get_overlay(topology.overlay)
    rendered = prepare_run(topology, out_dir, images)
    record = start_record(rendered, topology, images, scenarios)
    if results is None:
        results = ResultSet(rendered.run_id, rendered.directory)
    results.run_id = rendered.run_id
    note(f"run {rendered.run_id}: results in {rendered.directory}")
    try:
        with running(rendered) as stack:
            for scenario in scenarios:
                context = ScenarioContext(stack, topology, overlay, rendered.plan,
                                          rendered.directory / "raw" / scenario.name)
                run_passes(scenario, context, results)
        record.data["status"] = "completed"
    except KeyboardInterrupt as interrupt:
        record.data["status"] = f"interrupted ({interrupt or 'Ctrl-C'})"
        raise
    except Exception as error:
        record.data["status"] = f"failed: {error}"
        raise
    finally:
        record.data["ended"] = now_iso()
        record.save()
        results.write()
    return rendered.directory


def run_passes(scenario: Scenario, context: ScenarioContext, results: ResultSet) -> None:
    topology = context.topology
    settings = scenario.settings(topology)
    unsupported = context.overlay.supports(scenario.name)
    for pass_no in range(1, topology.settings.passes + 1):
        if unsupported:
            outcome_metrics: dict[str, tuple[float | None, str]] = {"skipped": (None, "")}
            results.add(scenario.name, topology.overlay, pass_no, outcome_metrics, settings,
                        status=unsupported)
            line = result_line(scenario.name, topology.overlay, pass_no, {"status": unsupported})
        else:
            outcome = scenario.run_pass(context, pass_no)
            results.add(scenario.name, topology.overlay, pass_no, outcome.metrics, settings,
                        status=outcome.status)
            fields = dict(outcome.summary)
            if outcome.status != "ok":
                fields["status"] = outcome.status
            line = result_line(scenario.name, topology.overlay, pass_no, fields)
        results.lines.append(line)
        results.write()
        out_console.print(line)
        step_done(f"{scenario.name} on {topology.overlay}: pass {pass_no} done")
