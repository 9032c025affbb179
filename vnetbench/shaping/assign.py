"""`--set SEGMENT.KEY=VALUE[,VALUE...]`: changing link profiles from the command line
(`vnetbench shape` on a running topology, `vnetbench sweep` over a list)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from pydantic import ValidationError

from vnetbench.errors import UserError
from vnetbench.model.topology import LinkProfile, Topology

SEGMENTS = ("site", "backbone")
KEYS = tuple(LinkProfile.model_fields)
UNIT = re.compile(r"^[\d.]+\s*([a-z%]+)$", re.IGNORECASE)
COLUMN_UNITS = {"rate": "_mbit", "delay": "_ms", "jitter": "_ms", "loss": "_percent"}
AXIS_LABELS = {"rate": "Mbit/s", "delay": "ms each way", "jitter": "ms", "loss": "% each way"}


@dataclass(frozen=True)
class Assignment:
    segment: str  # site, backbone, or agent:<name>
    key: str
    values: list[str]

    @property
    def parameter(self) -> str:
        return f"{self.segment}.{self.key}"

    @property
    def column(self) -> str:
        """The results column of this parameter's value (var_ + this): backbone_loss_percent."""
        segment = self.segment.replace("agent:", "agent_").replace("-", "_")
        return f"{segment}_{self.key}{COLUMN_UNITS.get(self.key, '')}"

    def value_in(self, topology: Topology) -> float | bool | None:
        """The parameter's value in a topology, in the column's unit."""
        if self.segment.startswith("agent:"):
            link = topology.agent(self.segment.split(":", 1)[1]).link or LinkProfile()
        else:
            link = getattr(topology.links, self.segment)
        value: float | bool | None = getattr(link, self.key)
        return value / 1e6 if self.key == "rate" and value is not None else value


def parse_assignment(text: str) -> Assignment:
    """'backbone.loss=0,0.5,1%' -> backbone, loss, ['0%', '0.5%', '1%'] (a unit on the
    last value applies to the bare numbers before it)."""
    target, sep, raw = text.partition("=")
    segment, dot, key = target.strip().rpartition(".")
    valid_segment = segment in SEGMENTS or segment.startswith("agent:")
    values = [v.strip() for v in raw.split(",") if v.strip()]
    if not sep or not dot or not valid_segment or key not in KEYS or not values:
        raise UserError(
            f"'--set {text}' is not SEGMENT.KEY=VALUE[,VALUE...]: SEGMENT is site, backbone "
            f"or agent:NAME, KEY one of {', '.join(KEYS)}; e.g. --set backbone.delay=10ms or "
            "--set backbone.loss=0,0.5,1,2,5%."
        )
    unit = UNIT.match(values[-1])
    if unit:
        values = [v if UNIT.match(v) or not v.replace(".", "").isdigit() else v + unit[1]
                  for v in values]
    return Assignment(segment, key, values)


def with_link_setting(topology: Topology, assignment: Assignment, value: str) -> Topology:
    """The topology with one link setting changed, validated like the file itself."""
    data = topology.model_dump()
    if assignment.segment.startswith("agent:"):
        name = assignment.segment.split(":", 1)[1]
        agent = next((a for a in data["agents"] if a["name"] == name), None)
        if agent is None:
            raise UserError(f"--set {assignment.parameter}: the topology has no agent {name}.")
        agent["link"] = {**(agent.get("link") or {}), assignment.key: value}
    else:
        data["links"][assignment.segment][assignment.key] = value
    try:
        return Topology.model_validate(data)
    except ValidationError as error:
        problem = "; ".join(str(e["msg"]).removeprefix("Value error, ") for e in error.errors())
        raise UserError(f"--set {assignment.parameter}={value}: {problem}.") from None

