"""A reference method: how the authors of a published benchmark measured, as a
preset that sets the topology's settings and links, step by step, and the rows
of the table it prints (one column per overlay, as its reference reads)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from vnetbench.errors import UserError
from vnetbench.model.topology import Topology, describe_validation_error


@dataclass(frozen=True)
class Step:
    """One row group of the method's table: settings and links for one measurement."""

    label: str  # e.g. "MTU 1400, encrypted": the results' variant
    settings: dict[str, Any] = field(default_factory=dict)
    links: dict[str, dict[str, Any]] = field(default_factory=dict)  # segment -> profile


@dataclass(frozen=True)
class Method:
    name: str
    reference: str  # the file in ../shared/references it reproduces
    summary: str
    scenario: str  # the scenario every step runs
    steps: tuple[Step, ...]
    rows: tuple[str, ...]  # the metrics of its table, in order
    settings: dict[str, Any] = field(default_factory=dict)  # for every step
    short: dict[str, Any] = field(default_factory=dict)  # the short form's settings
    short_steps: tuple[str, ...] = ()  # the short form's steps (empty: all)
    differences: str = ""  # how this differs from the reference, said in the report

    def steps_for(self, short: bool) -> tuple[Step, ...]:
        if short and self.short_steps:
            return tuple(s for s in self.steps if s.label in self.short_steps)
        return self.steps

    def step_topology(self, base: Topology, step: Step, short: bool = False,
                      given: dict[str, Any] | None = None) -> Topology:
        """The base topology with, in rising precedence, the method's settings, its
        short form's, those `given` on the command line, and the step's own (what
        makes the step); then the step's links."""
        settings = {**base.settings.model_dump(), **self.settings,
                    **(self.short if short else {}), **(given or {}), **step.settings}
        links = base.links.model_dump()
        for segment, profile in step.links.items():
            links[segment] = {**links[segment], **profile}
        try:
            return Topology.model_validate({**base.model_dump(), "settings": settings,
                                            "links": links})
        except ValidationError as error:  # e.g. the topology's tls: true, a step's
            raise UserError(describe_validation_error(  # encryption: false
                error, f"topology '{base.name}' under method {self.name}, step "
                f"'{step.label}'")) from None

    def passes(self, base: Topology, short: bool, given: dict[str, Any] | None = None
               ) -> int:
        """Passes of every step on one overlay (a job's progress counts them)."""
        return sum(self.step_topology(base, step, short, given).settings.passes
                   for step in self.steps_for(short))
