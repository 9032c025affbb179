"""Faults that cannot touch what a scenario measures: a fault run that would measure as
if nothing happened, and say it measured a fault (issue #61, item 4).

The backbone's faults (link, loss, delay, flap, ramp, a partition) act on the edges
between switches (faults/schedule.py), so a load whose agents are all on one switch
never meets them, whatever the overlay (each keeps a site's traffic on its site). A
killed switch, or a partition, is on the path only where the overlay's packets pass:
with the baseline's kernel routing, only the switches of the agents themselves; the
tunnel overlays' hubs may relay through others (OpenVPN's first hub serves the other
sites), so there it is not decided here. vNet's conductor places the agents itself:
the path is known only once they joined, and nothing is refused before.
"""

from __future__ import annotations

from collections.abc import Collection

from vnetbench.errors import UserError
from vnetbench.model.faults.declared import Fault

BACKBONE_EVENTS = ("link", "loss", "delay", "flap", "ramp")
# overlays whose packets between two agents cross only the agents' own switches
ENDS_ONLY = frozenset({"baseline"})
# overlays that choose each agent's switch themselves, when it joins
PLACED_AT_RUN_TIME = frozenset({"vnet"})


def why_untouched(fault: Fault, ends: Collection[str], switches: Collection[str],
                  overlay: str, joined: bool = False) -> str | None:
    """Why `fault` cannot touch a load between agents on the switches `ends`, or None
    (it may, or that is known only at run time). `joined`: `ends` are where the agents
    joined, not where the topology places them."""
    if overlay in PLACED_AT_RUN_TIME and not joined:
        return None
    on = ", ".join(sorted(ends))
    if (fault.event in BACKBONE_EVENTS or fault.partition) and len(set(ends)) == 1:
        return (f"every measured agent is on {on}, so no packet of theirs crosses the "
                "backbone between switches")
    if overlay not in ENDS_ONLY:
        return None
    if isinstance(fault.kill, str) and fault.kill in switches and fault.kill not in ends:
        return (f"{fault.kill} holds no measured agent, and {overlay}'s packets cross only "
                f"the switches of their ends ({on})")
    if fault.partition:
        sides = {n for n, side in enumerate(fault.partition) for end in ends if end in side}
        if len(sides) <= 1:
            return (f"the measured agents' switches ({on}) are all on one side of it, and "
                    f"{overlay}'s packets cross only those switches")
    return None


def refuse_untouched(faults: Collection[Fault], ends: Collection[str],
                     switches: Collection[str], overlay: str, measured: str,
                     topology: str, move: str) -> None:
    """UserError naming each fault that cannot touch the measured path, before
    anything starts: the run would report a fault it never met. `move`: how the
    measured agents are put on both sides of it."""
    found = [f"faults.{n} ({fault.describe()}): {why}" for n, fault in enumerate(faults)
             if (why := why_untouched(fault, ends, switches, overlay))]
    if found:
        raise UserError(
            f"Topology '{topology}' with {overlay}: {'; '.join(found)}. The {measured} "
            "would measure as if no fault happened, and be reported as a fault run. Put "
            "the fault on the measured path (a switch of its agents, the backbone between "
            f"two of them), or {move}, or leave the fault out.")


def missed_at_run_time(faults: Collection[Fault], ends: Collection[str],
                       switches: Collection[str], overlay: str) -> list[str]:
    """Where the overlay placed the agents itself (vNet), the faults the joined agents'
    path missed, one sentence each for the pass's status: known only once they joined,
    so said with the figures rather than refused."""
    if overlay not in PLACED_AT_RUN_TIME:
        return []
    return [f"faults.{n} ({fault.describe()}) missed the measured path once the agents "
            f"joined: {why}; this pass measured no fault"
            for n, fault in enumerate(faults)
            if (why := why_untouched(fault, ends, switches, overlay, joined=True))]
