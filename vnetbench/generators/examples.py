"""The example topologies whose rendered compose files are committed in compose/.

Each gets a fixed run id and its own address block (at the top of the pool,
where vnetbench's own runs come last), so the files are stable and several
can run by hand at once: `docker compose -f compose/<name>.yml up`.
"""

from __future__ import annotations

from ipaddress import IPv4Network
from pathlib import Path

from vnetbench.deploy.render import render_compose
from vnetbench.model.addressing import plan_addresses
from vnetbench.model.topology import load_topology
from vnetbench.overlays import overlay_for
from vnetbench.runtime.images import ImageSet
from vnetbench.runtime.paths import PROJECT_ROOT

TOPOLOGIES = PROJECT_ROOT / "topologies"
COMPOSE_DIR = PROJECT_ROOT / "compose"
EXAMPLE_BLOCKS = {
    "two-sites": IPv4Network("10.191.0.0/16"),
    "four-sites": IPv4Network("10.190.0.0/16"),
}


def render_example(name: str) -> str:
    topology = load_topology(TOPOLOGIES / f"{name}.yml", overrides={})
    plan = plan_addresses(topology, name, EXAMPLE_BLOCKS[name])
    return render_compose(topology, overlay_for(topology), name, plan, ImageSet(), marks=False)


def write_examples(directory: Path = COMPOSE_DIR) -> list[Path]:
    written = []
    for name in EXAMPLE_BLOCKS:
        path = directory / f"{name}.yml"
        path.write_text(render_example(name))
        written.append(path)
    return written


if __name__ == "__main__":
    for path in write_examples():
        print(path)
