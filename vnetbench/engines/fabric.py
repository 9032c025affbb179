"""The host side of a run's `fabric` helper: its one DOCKER-USER rule.

The helper removes its rule when stopped; these functions find and remove
rules left by a helper that was killed instead (e.g. the engine died), on
every engine the run spans (this machine's, or each node of a swarm run: one
fabric helper per node). Not being able to look is said, never read as
"none left". A rule is removed by an argument list parsed from what iptables
printed, never by its text through a shell (a run id is the user's text).
"""

from __future__ import annotations

import shlex

from python_on_whales import DockerClient
from python_on_whales.exceptions import DockerException

from vnetbench.errors import UserError
from vnetbench.runtime.images import TOOLS_IMAGE
from vnetbench.runtime.labels import helper_labels

FLAVOURS = ("iptables-nft", "iptables-legacy")


class FabricUnknown(UserError):
    """The DOCKER-USER chain of an engine's host could not be read."""


def _on_host(client: DockerClient, where: str, argv: list[str]) -> str:
    """argv run in the host's network namespace by a helper of the tools image."""
    host = f"swarm node {where}" if where else "this machine"
    if not client.image.exists(TOOLS_IMAGE):
        raise FabricUnknown(f"The DOCKER-USER rules on {host} cannot be checked: the image "
                            f"{TOOLS_IMAGE} is not there. Build it ('vnetbench images build'),"
                            " then run 'vnetbench clean'; meanwhile 'iptables -S DOCKER-USER' "
                            "shows them.")
    try:
        return str(client.run(TOOLS_IMAGE, argv, networks=["host"], cap_add=["NET_ADMIN"],
                              remove=True, pull="never",
                              labels=helper_labels("fabric-sweep", where or "local")))
    except DockerException as error:
        said = (error.stderr or str(error)).strip().splitlines()[-1:]
        raise FabricUnknown(f"The DOCKER-USER rules on {host} could not be read "
                            f"({' '.join(said)}); 'iptables -S DOCKER-USER' there shows "
                            "them.") from None


def _rules_on(client: DockerClient, where: str, run_id: str | None) -> list[tuple[str, str]]:
    tag = f"vnetbench:{run_id}\"" if run_id else "vnetbench:"
    # The first flavour that holds Docker's chain, as the helper chooses; asking
    # the other would create its tables on the host.
    script = (f"for f in {' '.join(FLAVOURS)}; do if out=$($f -S DOCKER-USER 2>/dev/null); "
              'then echo "$out" | sed "s/^/$f /"; break; fi; done')
    rules = []
    for line in _on_host(client, where, ["sh", "-c", script]).splitlines():
        flavour, _, rule = line.partition(" ")
        if tag in rule and rule.startswith("-A DOCKER-USER"):
            rules.append((flavour, rule))
    return rules


Hosts = list[tuple[str, DockerClient]]  # DockerEngine.hosts(): (host name, client)


def fabric_rules(hosts: Hosts, run_id: str | None = None) -> list[tuple[str, str]]:
    """(iptables flavour, rule) for the DOCKER-USER rules of a run (or of every run) on
    these hosts; FabricUnknown when one cannot be read."""
    return [rule for where, client in hosts for rule in _rules_on(client, where, run_id)]


def deletion_argv(flavour: str, rule: str) -> list[str]:
    """The command that deletes a rule `iptables -S` printed ("-A DOCKER-USER ..."):
    the rule's words as iptables quoted them, "-A" become "-D"."""
    if flavour not in FLAVOURS:
        raise ValueError(f"not an iptables flavour vnetbench uses: {flavour!r}")
    words = shlex.split(rule)
    if words[:2] != ["-A", "DOCKER-USER"]:
        raise ValueError(f"not a DOCKER-USER rule: {rule!r}")
    return [flavour, "-D", *words[1:]]


def remove_fabric_rules(hosts: Hosts, run_id: str | None = None) -> int:
    """Remove them on these hosts, each by its own argument list; how many there were."""
    removed = 0
    for where, client in hosts:
        rules = _rules_on(client, where, run_id)
        for flavour, rule in rules:
            _on_host(client, where, deletion_argv(flavour, rule))
        removed += len(rules)
    return removed
