"""Rendering: a topology becomes a run directory with compose.yml and its files.

A pure function of its inputs: the overlay arrives configured and detected
(what its images hold was asked of the engine before), so a golden test
renders the same bytes on any machine, engine or not.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from ipaddress import IPv4Network
from pathlib import Path

import yaml
from jinja2 import (
    BaseLoader,
    ChoiceLoader,
    Environment,
    FileSystemLoader,
    FunctionLoader,
    StrictUndefined,
)

from vnetbench import __version__
from vnetbench.engines.base import RenderedRun
from vnetbench.engines.facts import EngineFacts
from vnetbench.files import write_text_atomic
from vnetbench.model.addressing import AddressPlan, plan_addresses
from vnetbench.model.topology import Topology
from vnetbench.overlays import Overlay
from vnetbench.runtime import gate
from vnetbench.runtime.images import ImageSet
from vnetbench.runtime.labels import SYSTEM_ROLES, detached_owner, names_for_templates, project_name
from vnetbench.runtime.paths import TEMPLATES
from vnetbench.runtime.scratch import link_secret_dirs

COMPOSE_FILE = "compose.yml"


def template_environment(overlay: Overlay | None = None) -> Environment:
    """The templates' folder, and an overlay's own services template when it keeps
    it beside its adapter (Overlay.templates) rather than in templates/overlays/."""
    loaders: list[BaseLoader] = [FileSystemLoader(TEMPLATES)]
    if overlay is not None and overlay.templates is not None:
        loaders.insert(0, own_services_template(overlay.name, overlay.templates))
    environment = Environment(
        loader=ChoiceLoader(loaders),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=False,
    )
    environment.filters["flow"] = flow
    return environment


def own_services_template(overlay: str, folder: Path) -> FunctionLoader:
    """`overlays/<overlay>/services.yml.j2` read from the overlay's own folder."""
    wanted, path = f"overlays/{overlay}/services.yml.j2", folder / "services.yml.j2"

    def load(name: str) -> tuple[str, str, Callable[[], bool]] | None:
        return (path.read_text(), str(path), lambda: True) if name == wanted else None

    return FunctionLoader(load)


def flow(value: object) -> str:
    """A value as YAML flow (JSON), with '$' doubled so Compose takes it literally."""
    return json.dumps(value, ensure_ascii=False).replace("$", "$$")


HAND_RUN = detached_owner("compose file")  # a file rendered to run by hand
CURRENT_ENGINES = EngineFacts()  # version unknown: an engine of today (start_interval)


def render_compose(
    topology: Topology, overlay: Overlay, run_id: str, plan: AddressPlan, images: ImageSet,
    owner: str = HAND_RUN, engine: EngineFacts = CURRENT_ENGINES, marks: bool = True,
) -> str:
    """The compose file; `owner` is the owner label of everything in it (labels.py),
    `engine` what the engine that runs it can do (health-check timing); `marks` False:
    a file only ever run by hand (compose/), whose agents tell vnetbench nothing (no
    marks directory beside it for them to write in)."""
    context = {
        "version": __version__,
        "topology": topology,
        "overlay": overlay,
        "run_id": run_id,
        "project": project_name(run_id),
        "plan": plan,
        "images": images,
        "label": names_for_templates(),
        "owner": owner,
        "engine": engine,
        "marks": {"mount": gate.MARKS_MOUNT, "directory": f"{gate.GATE_DIR}/{gate.MARKS_DIR}"}
        if marks else None,
        **overlay.template_context(topology, plan),
    }
    text = template_environment(overlay).get_template("compose.yml.j2").render(context)
    text = "\n".join(line.rstrip() for line in text.splitlines()) + "\n"
    return supervised(text) if topology.start_gate else text


def supervised(text: str) -> str:
    """A gated stack (join) whose programs the entry wrapper restarts between passes
    (gate.supervise), its header comments kept."""
    compose = yaml.safe_load(text)
    gate.supervise(compose["services"], SYSTEM_ROLES)
    lines = text.splitlines(keepends=True)
    comments = "".join(itertools.takewhile(lambda line: line.startswith("#"), lines))
    note = ("# The system under test runs supervised by vnetbench-entry (restarted in\n"
            "# place between join passes).\n")
    return comments + note + yaml.dump(compose, Dumper=BlockDumper, sort_keys=False, width=100)


class BlockDumper(yaml.SafeDumper):
    """Multi-line strings (scripts) as literal blocks, as the templates write them."""


def _literal_block(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", value,
                                   style="|" if "\n" in value else None)


BlockDumper.add_representer(str, _literal_block)


def render_run(
    topology: Topology,
    overlay: Overlay,
    run_id: str,
    block: IPv4Network,
    directory: Path,
    images: ImageSet | None = None,
    owner: str = HAND_RUN,
    engine: EngineFacts = CURRENT_ENGINES,
    scratch: Path | None = None,
) -> RenderedRun:
    """Write compose.yml and the overlay's files into directory; with `scratch`, the
    overlay's folders that hold keys are made there and linked from directory (a run's
    keys never enter its results: vnetbench/runtime/scratch.py)."""
    plan = plan_addresses(topology, run_id, block)
    directory.mkdir(parents=True, exist_ok=True)
    if scratch is not None:
        link_secret_dirs(directory, scratch, overlay.secret_dirs)
    compose_file = directory / COMPOSE_FILE
    write_text_atomic(compose_file, render_compose(topology, overlay, run_id, plan,
                                                   images or ImageSet(), owner, engine))
    overlay.write_files(topology, plan, directory)
    return RenderedRun(run_id, project_name(run_id), directory, compose_file, plan)
