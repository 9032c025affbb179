"""The scenario interface: one pass of a measurement on a running stack."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import ClassVar

import pandas as pd
from pydantic import ValidationError

from vnetbench.core.metrics import Metric
from vnetbench.core.outcome import Applicability, NotApplicable, Outcome, State
from vnetbench.declared.declaration import Declaration
from vnetbench.engines.stack import Stack
from vnetbench.errors import UserError
from vnetbench.measure.events import last_lines
from vnetbench.model.addressing import AddressPlan
from vnetbench.model.capabilities import Capability, applicability, settings_needs
from vnetbench.model.topology import Topology, describe_validation_error
from vnetbench.overlays import Overlay, overlay_for
from vnetbench.shaping.apply import ShapingKeeper

Metrics = dict[str, tuple[float | None, str]]


@dataclass(frozen=True)
class ScenarioContext:
    stack: Stack
    topology: Topology
    overlay: Overlay
    plan: AddressPlan
    raw_dir: Path  # raw tool output of this scenario goes here
    # the keeper of the links' shaping (None: not kept), told when a scenario re-shapes
    shaping: ShapingKeeper | None = None

    def container(self, agent: str) -> str:
        """The container an agent runs in (its own, or its pool's)."""
        return self.stack.container(self.topology.container_of(agent))

    def events(self, role: str, event: str, since: datetime | None = None) -> pd.DataFrame:
        """One event of one role, from its containers' logs (since a time), matched with
        the overlay's pattern; empty when the overlay has no pattern for it."""
        return self.overlay.events(self.stack, role, event, since)

    def placement(self) -> dict[str, str]:
        """Agent -> the switch it is attached to: as the overlay's join events say
        (vNet's conductor picks the switch itself), else as the topology places it.
        With join events, agents that did not join are left out (if two or more did)."""
        placed = {a.name: a.switch for a in self.topology.agents}
        if self.overlay.join_event is None:
            return placed
        frame = self.events(*self.overlay.join_event)
        joined = {}
        for fields, process in zip(frame["fields"], frame["process"], strict=True):
            agent = str(fields.get("agent") or process)
            if agent in placed:
                joined[agent] = str(fields.get("switch") or placed[agent])
        return joined if len(joined) >= 2 else placed

    def last_log_lines(self, count: int = 2, roles: tuple[str, ...] = ("agent", "switch")
                       ) -> dict[str, list[str]]:
        """The last lines of every agent's and switch's log (or those of `roles`), to
        explain a failure; each role's logs read in one call where the engine can."""
        sources = [source for role in roles for source in self.stack.logs(role, at_once=True)]
        return {source.node: last_lines(source, count) for source in sources}


def build_room(topology: Topology, scenario: str, why: str, fix: str,
               **changes: object) -> Topology:
    """A scenario's own topology made from the user's: `changes` applied, what no
    longer applies dropped (new agents: the user's measure pair names agents the room
    does not have), its problems in one paragraph saying `why` it is so and the `fix`."""
    data = topology.model_dump()
    data.update(changes)
    if "agents" in changes:
        data["measure"] = None
    try:
        return Topology.model_validate(data)
    except ValidationError as error:
        problems = [line.strip(" -").removeprefix("(top level): ") for line in
                    describe_validation_error(error, "room").splitlines()[1:-1]]
        raise UserError(
            f"The {scenario} scenario cannot run on topology '{topology.name}' with "
            f"{topology.overlay}: its stack would be {why}, which is not a topology "
            f"vnetbench can run ({'; '.join(problems)}). {fix}") from None


@dataclass(frozen=True)
class SeriesPoint:
    """One value of a time series within a pass (a row with `interval_s`)."""

    metric: str
    value: float
    unit: str
    interval_s: float  # the end of its interval, seconds since the measurement began


@dataclass
class PassResult:
    metrics: Metrics
    summary: dict[str, float | int | str | None]  # fields of the RESULT line
    # its state and problems; their sentences are the results' status ("path dead: ...")
    outcome: Outcome = field(default_factory=Outcome)
    notes: list[str] = field(default_factory=list)
    series: list[SeriesPoint] = field(default_factory=list)
    # services the pass's own faults killed (failover): their deaths are the measurement,
    # not the pass's failure (runs/outcomes.py leaves them out)
    fault_killed: set[str] = field(default_factory=set)

    @property
    def state(self) -> State:
        return self.outcome.state

    @property
    def status(self) -> str:
        return self.outcome.status


class Scenario(ABC):
    # What it declares (vnetbench/declared/): its name, help line and metrics
    # are read from there.
    declaration: ClassVar[Declaration]
    name: ClassVar[str]
    description: ClassVar[str]
    # Every metric run_pass emits (its declaration's: the metric catalogue reads them).
    metrics: ClassVar[tuple[Metric, ...]] = ()
    # What is fresh in every pass but the first on a stack (run.json `timings`).
    fresh_between_passes: ClassVar[str] = "nothing (one stack for every pass)"
    # What it needs of an overlay (vnetbench.model.capabilities decides where it runs).
    needs: ClassVar[frozenset[Capability]] = frozenset()
    # Whether it injects the topology's `faults` (run --fault is refused for the others).
    injects_faults: ClassVar[bool] = False
    # Whether it runs the topology's `workload` (run --workload is refused for the others).
    runs_workload: ClassVar[bool] = False
    # Whether a matrix cell of it may run on a stack another cell of the same shape used
    # before it (runs/cells.py): only a scenario that leaves the stack as it found it (its
    # programs stopped, no container restarted or reconfigured) and reads nothing the
    # stack kept from before its own passes. Set where that holds; failover restarts
    # containers, join wants programs (or stacks) fresh, config reconfigures the
    # overlay, flood counts the limiter's drops over the switches' whole log.
    shares_stack: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        declared = cls.__dict__.get("declaration")
        if declared is not None:
            cls.name, cls.description, cls.metrics = (declared.name, declared.description,
                                                      declared.metrics)

    @classmethod
    def needs_for(cls, topology: Topology | None = None) -> frozenset[Capability]:
        """What it needs of the overlay: its own, and what the topology's settings ask."""
        return cls.needs | (settings_needs(topology) if topology else frozenset())

    def applicability(self, overlay: Overlay, topology: Topology | None = None
                      ) -> Applicability:
        """Can it run on this overlay (with this topology's settings)?"""
        return applicability(self.needs_for(topology), overlay)

    def stack_topology(self, topology: Topology, overlay: Overlay) -> Topology:
        """The topology this scenario's stack runs (e.g. join: N gated agents)."""
        return topology

    def fresh_stack_per_pass(self, topology: Topology) -> bool:
        """Does every pass bring up its own stack?"""
        return False

    def check(self, topology: Topology) -> None:
        """Raise UserError before anything starts if the topology cannot host this:
        its stack's topology (a room the scenario builds) valid, its nodes fitting the
        overlay's addresses (else they would be refused mid-run), and this machine's
        shared limits starting its daemons (EnvironmentProblem, exit 3)."""
        if type(self).stack_topology is Scenario.stack_topology:
            return  # it runs the topology as it is, checked when it was read and prepared
        overlay = overlay_for(topology)
        if isinstance(self.applicability(overlay), NotApplicable):
            return  # its rows say why; no stack is built
        room = self.stack_topology(topology, overlay)
        overlay_for(room).overlay_addresses(room)
        overlay_for(room).require_host_limits(room)

    @abstractmethod
    def run_pass(self, context: ScenarioContext, pass_no: int) -> PassResult:
        """Measure once; never hang (every wait is bounded)."""

    def settings(self, topology: Topology) -> dict[str, object]:
        """The settings that shaped this scenario's numbers (result columns)."""
        return {}
