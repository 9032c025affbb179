"""The host side of a run's `fabric` helper: its one DOCKER-USER rule.

The helper removes its rule when stopped; these functions find and remove
rules left by a helper that was killed instead (e.g. the engine died).
"""

from __future__ import annotations

from python_on_whales.exceptions import DockerException

from vnetbench.engine import docker
from vnetbench.images import TOOLS_IMAGE, image_id
from vnetbench.labels import ROLE

FLAVOURS = ("iptables-nft", "iptables-legacy")


def _host_shell(script: str) -> str:
    return str(docker.run(TOOLS_IMAGE, ["sh", "-c", script], networks=["host"],
                          cap_add=["NET_ADMIN"], remove=True, pull="never",
                          labels={ROLE: "fabric-sweep"}))


def fabric_rules(run_id: str | None = None) -> list[tuple[str, str]]:
    """(iptables flavour, rule) for the DOCKER-USER rules of a run (or of every run)."""
    if image_id(TOOLS_IMAGE) is None:
        return []
    tag = f"vnetbench:{run_id}\"" if run_id else "vnetbench:"
    # The first flavour that holds Docker's chain, as the helper chooses; asking
    # the other would create its tables on the host.
    script = (f"for f in {' '.join(FLAVOURS)}; do if out=$($f -S DOCKER-USER 2>/dev/null); "
              'then echo "$out" | sed "s/^/$f /"; break; fi; done')
    try:
        output = _host_shell(script)
    except DockerException:
        return []
    rules = []
    for line in output.splitlines():
        flavour, _, rule = line.partition(" ")
        if tag in rule and rule.startswith("-A DOCKER-USER"):
            rules.append((flavour, rule))
    return rules


def remove_fabric_rules(run_id: str | None = None) -> int:
    rules = fabric_rules(run_id)
    if rules:
        deletes = [f"{flavour} -D {rule.removeprefix('-A ')}" for flavour, rule in rules]
        _host_shell("; ".join(deletes))
    return len(rules)

