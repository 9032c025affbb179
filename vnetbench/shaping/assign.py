"""`--set SEGMENT.KEY=VALUE[,VALUE...]`: changing link profiles from the command line
(`vnetbench shape` on a running topology, `vnetbench sweep` over a list)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from vnetbench.errors import UserError
from vnetbench.topology import LinkProfile, Topology

SEGMENTS = ("site", "backbone")
KEYS = tuple(LinkProfile.model_fields)
UNIT = re.compile(r"^[\d.]+\s*([a-z%]+)$", re.IGNORECASE)


@dataclass(frozen=True)
class Assignment:
    segment: str  # site, backbone, or agent:<name>
    key: str
    values: list[str]

    @property
    def parameter(self) -> str:
        return f"{self.segment}.{self.key}"


def parse_assignment(text: str) -> Assignment:
    """'backbone.loss=0,0.5,1%' -> backbone, loss, ['0%', '0.5%', '1%'] (a unit on the
    last value applies to the bare numbers before it)."""
    target, sep, raw = text.partition("=")
    segment, dot, key = target.strip().rpartition(".")
    valid_segment = segment in SEGMENTS or segment.startswith("agent:")
    if not sep or not dot or not valid_segment or key not in KEYS or not raw.strip():
        raise UserError(
            f"'--set {text}' is not SEGMENT.KEY=VALUE[,VALUE...]: SEGMENT is site, backbone "
            f"or agent:NAME, KEY one of {', '.join(KEYS)}; e.g. --set backbone.delay=10ms or "
            "--set backbone.loss=0,0.5,1,2,5%."
        )
    values = [v.strip() for v in raw.split(",") if v.strip()]
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


def link_profiles(topology: Topology) -> dict[str, Any]:
    return {"site": topology.links.site.model_dump(mode="json"),
            "backbone": topology.links.backbone.model_dump(mode="json")}
