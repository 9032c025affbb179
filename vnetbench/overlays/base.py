"""What every overlay adapter provides: the one interface the rest codes against.

An adapter is a small class plus its template folder
`templates/overlays/<name>/services.yml.j2`. Nothing outside the adapter and
its templates knows an overlay by name.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from ipaddress import IPv4Address
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError

from vnetbench.core.outcome import APPLICABLE, Applicability, Unsupported
from vnetbench.engines import engine_services
from vnetbench.errors import OverlayUnavailable, UserError
from vnetbench.measure.events import lookup_events
from vnetbench.model.addressing import AddressPlan
from vnetbench.model.capabilities import Capability
from vnetbench.model.topology import Topology
from vnetbench.runtime.host_limits import (
    neighbours_needed,
    require_inotify,
    require_neighbours,
)
from vnetbench.runtime.labels import FABRIC_SERVICE

if TYPE_CHECKING:
    from collections.abc import Callable
    from datetime import datetime

    import pandas as pd

    from vnetbench.engines.stack import Stack

    # (role, event) -> that event's frame since the join release (measure/events.py)
    EventLookup = Callable[[str, str], pd.DataFrame]


@dataclass(frozen=True)
class AgentLimits:
    """Per-agent limits an overlay enforces, as a token bucket with a burst."""

    packets_per_second: float
    bits_per_second: float
    burst_seconds: float


@dataclass(frozen=True)
class Reconfiguration:
    """What a config change took: its size and the time until every switch confirmed."""

    lines: int
    bytes: int
    seconds: float | None
    confirmed: int
    expected: int
    unconfirmed: str = ""  # why not every switch confirmed, or "" when all did


class OverlayOptions(BaseModel):
    """An overlay's `overlay_options.<name>` from the topology; unknown keys are refused."""

    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass(frozen=True)
class Adjusted:
    """A topology's settings as this overlay build can run them, and what changed."""

    topology: Topology
    remark: str = ""  # e.g. "TLS not in this build: measured plain"


class Overlay(ABC):
    """One overlay, bound to a run's options: created once (overlays.overlay_for),
    `detect()`ed once before rendering, then passed down to every hook."""

    name: ClassVar[str]
    summary: ClassVar[str]
    options_model: ClassVar[type[OverlayOptions]] = OverlayOptions
    data_path: str  # the hops a packet between two sites takes
    # What it can do (vnetbench.model.capabilities); what its build in use lacks: missing().
    capabilities: ClassVar[frozenset[Capability]] = frozenset()
    # (role, event) of event_patterns() that marks one agent joined; its fields
    # name the agent ("agent") and where it attached ("switch").
    join_event: tuple[str, str] | None = None
    # The role of its control plane, apart from the data path (failover kills it alone);
    # None: it has none that can fail on its own. Capability.CONTROL_PLANE says so too.
    control_plane: ClassVar[str | None] = None
    # The tunnel device in agents' namespaces whose counters prove traffic used the
    # overlay (None: no such device, e.g. plain routing).
    tunnel_interface: str | None = None
    # Join passes on kept containers: seconds the release waits after the servers
    # (conductor, switches) passed their readiness test again, for servers that treat
    # the connections of their first moments otherwise (after a fresh bring-up, the
    # agents' containers take seconds to start, so no such wait is needed there).
    servers_settle_s = 0.0
    # The other switches' servers dial the first switch's: between join passes it
    # starts again, and is ready, before them (a dial it refused waits for the
    # overlay's retry timer).
    first_switch_first = False
    # The services this overlay's template generates besides the agents' containers,
    # "{switch}" standing for each switch's name (test_render holds them to what the
    # template renders); every topology node must leave them their names.
    services: ClassVar[tuple[str, ...]] = ()
    # The folder of its services template (services.yml.j2) when it keeps it beside its
    # adapter; None: templates/overlays/<name>/.
    templates: ClassVar[Path | None] = None
    # The folders of the run directory write_files puts keys in: made in the run's
    # scratch directory, linked from the run directory (vnetbench/runtime/scratch.py).
    secret_dirs: ClassVar[tuple[str, ...]] = ()
    # inotify instances the overlay's daemon takes in each agent and switch container
    # (runtime/host_limits.py: a per-user limit all containers share)
    inotify_per_node: ClassVar[int] = 0

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        try:
            self.options = self.options_model.model_validate(dict(options or {}))
        except ValidationError as error:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or '(all)'}: {e['msg']}"
                for e in error.errors())
            raise UserError(
                f"overlay_options.{self.name} is not valid: {problems}. Fix these keys in the "
                f"topology (the options {self.name} knows: "
                f"{', '.join(self.options_model.model_fields) or 'none'})."
            ) from None

    def generated_services(self, topology: Topology) -> dict[str, str]:
        """Every service a compose file of this topology holds -> what it is: the
        fabric helper (compose.yml.j2), this overlay's own, the agents' containers."""
        generated = [(FABRIC_SERVICE, "the fabric helper vnetbench adds to every run")]
        generated += [(name, f"{self.name}'s own service '{name}'") for name in
                      self.services if "{switch}" not in name]
        generated += [(name.format(switch=switch), f"switch '{switch}'" if name == "{switch}"
                       else f"the {self.name} service of switch '{switch}'")
                      for name in self.services if "{switch}" in name
                      for switch in topology.switches]
        generated += list(engine_services(topology).items())
        generated += [(c.name, f"agent '{c.name}'" if c.agents == (c.name,) else
                       f"the pool container of agents on '{c.switch}'")
                      for c in topology.agent_containers()]
        return name_clashes(generated, topology, self)

    def detect(self) -> None:  # noqa: B027 (optional hook)
        """Learn, once, what only the engine knows (images, features of a build).
        Called before rendering, so that rendering itself never asks the engine."""

    # Why this overlay cannot carry its data unencrypted (settings.encryption: false);
    # None: it can, or it has nothing to turn off (the baseline).
    fixed_encryption: str | None = None

    def encryption_applicability(self, topology: Topology) -> Applicability:
        """encryption: false on an overlay that always encrypts is refused, with why."""
        if topology.settings.encryption is False and self.fixed_encryption:
            return Unsupported(f"not supported: encryption cannot be turned off on "
                               f"{self.name}: {self.fixed_encryption}")
        return APPLICABLE

    def require_available(self) -> None:
        """Can it run here at all (asks the engine once: detect)?"""
        missing = self.unavailable_reason()
        if missing:
            raise OverlayUnavailable(f"The overlay '{self.name}' cannot run here: {missing}")

    # The tunnel MTUs settings.tunnel_mtu may ask of this overlay (lowest, highest);
    # None: vnetbench cannot set it, for the reason in fixed_tunnel_mtu.
    tunnel_mtu_range: tuple[int, int] | None = None
    fixed_tunnel_mtu = "vnetbench has no way to set its tunnel MTU"
    tunnel_mtu_note = ""  # why the range is what it is, said when a setting is fitted

    def tunnel_mtu_limits(self, topology: Topology) -> tuple[int, int] | None:
        """The tunnel MTUs this topology can have (its links may bound them)."""
        return self.tunnel_mtu_range

    def tunnel_mtu(self, topology: Topology) -> int | None:
        """The tunnel device's MTU in this run: the setting, else the overlay's own
        (None: the overlay program's default)."""
        return topology.settings.tunnel_mtu

    def settings_applicability(self, topology: Topology) -> Applicability:
        """Settings this overlay cannot honour (encryption: false, a tunnel MTU),
        refused with why, never quietly measured otherwise."""
        refused = self.encryption_applicability(topology)
        if isinstance(refused, Unsupported):
            return refused
        if topology.settings.tunnel_mtu and self.tunnel_mtu_limits(topology) is None:
            return Unsupported(f"not supported: the tunnel MTU cannot be set on "
                               f"{self.name}: {self.fixed_tunnel_mtu}")
        return APPLICABLE

    def require_supported_settings(self, topology: Topology) -> None:
        """For a topology brought up outside the scenarios (`up`, the pytest plugin):
        a setting the overlay cannot honour is an error, not a quiet default."""
        refused = self.settings_applicability(topology)
        if not isinstance(refused, Unsupported):
            return
        if topology.settings.encryption is False and self.fixed_encryption:
            raise UserError(f"{refused.status}. Leave encryption on for {self.name} "
                            "(drop encryption: false or --no-encryption), or choose an "
                            "overlay that can turn it off.")
        raise UserError(f"{refused.status}. Drop tunnel_mtu (or --tunnel-mtu) for "
                        f"{self.name}, or choose an overlay whose tunnel MTU can be set.")

    def adjust(self, topology: Topology) -> Adjusted:
        """The settings this build can run, and what changed: the overlay's own
        adjustments (adjust_settings), then a tunnel MTU brought into its range."""
        return fit_tunnel_mtu(self, self.adjust_settings(topology))

    def adjust_settings(self, topology: Topology) -> Adjusted:
        """The overlay's own adjustments (e.g. TLS off where the build has none)."""
        return Adjusted(topology)

    @abstractmethod
    def target_address(self, topology: Topology, plan: AddressPlan, agent: str) -> str:
        """The address other agents reach this agent at, through the overlay."""

    def overlay_addresses(self, topology: Topology) -> dict[str, IPv4Address]:
        """Every node's address inside the overlay, by node name; UserError when the
        topology's nodes do not fit. None by default (the site addresses are routed)."""
        return {}

    def require_host_limits(self, topology: Topology) -> None:
        """EnvironmentProblem when this machine's shared per-user limits cannot start
        the topology's daemons (on this host's engine; a swarm's nodes have their own)."""
        nodes = len(topology.agents) + len(topology.switches)
        if topology.engine.name != "compose":
            return
        if self.inotify_per_node:
            require_inotify(self.inotify_per_node * nodes,
                            f"{self.name}'s {nodes} agents and switches")
        containers = len(topology.agent_containers())  # each agent in one of them
        require_neighbours(neighbours_needed(containers + len(topology.switches),
                                             len(topology.switches)),
                           f"{containers} agent containers and {len(topology.switches)} switches")

    def template_context(self, topology: Topology, plan: AddressPlan) -> dict[str, Any]:
        """Extra variables for this overlay's templates."""
        return {}

    def write_files(self, topology: Topology, plan: AddressPlan, run_dir: Path) -> list[Path]:
        """Config, keys and certificates the containers mount; none by default."""
        return []

    def private_files(self, run_dir: Path) -> list[Path]:
        """The files write_files left in run_dir that still hold a private key; none by
        default. Found from run_dir alone, so any run directory can be cleaned."""
        return []

    def remove_private(self, path: Path) -> None:
        """Make one of private_files() safe to keep: deleted by default; an overlay whose
        file mixes public settings with the key may redact the key instead."""
        path.unlink(missing_ok=True)

    def missing(self, capability: Capability) -> str | None:
        """None when the build in use has this one of its capabilities, else why not."""
        return None

    def event_patterns(self) -> dict[str, dict[str, str]]:
        """Per role, event name -> regular expression over its log lines."""
        return {}

    def events(self, stack: Stack, role: str, event: str,
               since: datetime | None = None) -> pd.DataFrame:
        """One event of one role, from its containers' logs on the stack (since a time),
        matched with this overlay's pattern; empty when it has no pattern for it."""
        return lookup_events(stack.logs(role, since=since), self.event_patterns(), role, event)

    def why_not_joined(self, events: EventLookup, missing: set[str]) -> dict[str, str]:
        """Agent -> why it did not join, where the servers' logs tell (a refusal the agent
        never logs); the agents left out are explained by their own last lines."""
        return {}

    def agent_limits(self, topology: Topology) -> AgentLimits | None:
        """The per-agent limits this topology runs with, if the overlay has any."""
        return None

    def limiter_event(self) -> tuple[str, str] | None:
        """(role, event) whose 'packets' field counts the limiter's drops, if logged."""
        return None

    def reconfigure(self, stack: Stack, topology: Topology, machines: int) -> Reconfiguration:
        """Load a config for `machines`, change one line, time until every switch confirms."""
        raise NotImplementedError(f"{self.name} has no configuration to change")

    def describe(self) -> list[tuple[str, bool, str]]:
        """Doctor lines: (check, ok, detail)."""
        reason = self.unavailable_reason()
        return [(f"overlay {self.name}", reason is None, reason or self.version())]

    def unavailable_reason(self) -> str | None:
        """None if this overlay can run here, else what is missing (e.g. images)."""
        return None

    def version(self) -> str:
        """The overlay's version, for the results header."""
        return "unknown"




def name_clashes(generated: list[tuple[str, str]], topology: Topology,
                 overlay: Overlay) -> dict[str, str]:
    """The services by name; UserError when two would have the same name (the later
    would replace the earlier in a parsed compose file: a gated or swarm render)."""
    services: dict[str, str] = {}
    clashes = []
    for name, what in generated:
        if name in services:
            clashes.append(f"'{name}' is both {services[name]} and {what}")
        services.setdefault(name, what)
    if clashes:
        own = ", ".join(name.replace("{switch}", "<switch>") for name in
                        (FABRIC_SERVICE, *overlay.services))
        raise UserError(
            f"Topology '{topology.name}' cannot run on {overlay.name}: {'; '.join(clashes)}. "
            "A compose file holds one service per name, so one would replace the other. "
            f"Rename the agent or switch ({overlay.name} names its own services {own}).")
    return services


def fit_tunnel_mtu(overlay: Overlay, adjusted: Adjusted) -> Adjusted:
    """A tunnel MTU outside what the overlay takes is measured at the nearest it
    takes, and the results say so (a method's large MTU on every overlay)."""
    topology = adjusted.topology
    asked = topology.settings.tunnel_mtu
    limits = overlay.tunnel_mtu_limits(topology)
    if asked is None or limits is None:
        return adjusted
    low, high = limits
    fitted = min(max(asked, low), high)
    if fitted == asked:
        return adjusted
    settings = topology.settings.model_copy(update={"tunnel_mtu": fitted})
    why = f" ({overlay.tunnel_mtu_note})" if overlay.tunnel_mtu_note else ""
    said = (f"tunnel MTU {asked} is outside {overlay.name}'s {low}-{high}{why}: measured "
            f"at {fitted}")
    return Adjusted(topology.model_copy(update={"settings": settings}),
                    "; ".join(r for r in (adjusted.remark, said) if r))


def remove_private_files(overlay: Overlay, run_dir: Path) -> list[Path]:
    """Delete (or redact) the private keys `overlay` left in run_dir; the paths handled.

    Call it once the run's containers are gone (they read the keys until then). Every
    file is tried; if some could not be handled, one UserError names them all.
    """
    handled: list[Path] = []
    failed: list[str] = []
    for path in overlay.private_files(run_dir):
        try:
            overlay.remove_private(path)
        except OSError as error:
            failed.append(f"{path} ({error.strerror or error})")
        else:
            handled.append(path)
    if failed:
        raise UserError(
            f"The private keys of this {overlay.name} run could not all be removed from "
            f"{run_dir}: {'; '.join(failed)}. Delete these files by hand: they hold the "
            "run's private keys, and the run directory may be shared.")
    return handled
