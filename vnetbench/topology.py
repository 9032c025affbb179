"""The topology model: what a YAML topology file declares, validated.

Pure data, no I/O beyond reading the file: the rest of vnetbench renders,
runs and measures what this module describes.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from vnetbench.errors import UserError
from vnetbench.units import parse_milliseconds, parse_percent, parse_rate

NAME_PATTERN = r"^[a-z][a-z0-9-]{0,30}$"
MAX_AGENTS_PER_SITE = 1000  # a Linux bridge takes at most 1023 ports

Rate = Annotated[int, BeforeValidator(parse_rate)]
Milliseconds = Annotated[float, BeforeValidator(parse_milliseconds), Field(ge=0)]
Percent = Annotated[float, BeforeValidator(parse_percent)]


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LinkProfile(Model):
    """Impairments of one network segment, each way (Mininet's convention)."""

    rate: Rate | None = None
    delay: Milliseconds = 0.0
    jitter: Milliseconds = 0.0
    loss: Percent = 0.0
    jitter_reorder: bool = False
    offloads: bool = Field(True, description="False: TSO/GSO/GRO off for per-packet loss")

    @property
    def is_shaped(self) -> bool:
        return bool(self.rate or self.delay or self.jitter or self.loss)


class Links(Model):
    site: LinkProfile = LinkProfile()
    backbone: LinkProfile = LinkProfile()


class AgentSpec(Model):
    name: str = Field(pattern=NAME_PATTERN)
    switch: str
    link: LinkProfile | None = None  # overrides the site profile on this agent's interface


class Settings(Model):
    """Scenario settings; the seed's BENCH_* variables override them."""

    seconds: float = Field(10.0, gt=0, le=3600, description="TCP stream length (BENCH_SECONDS)")
    passes: int = Field(3, ge=1, le=100, description="repetitions of each measurement")
    pings: int = Field(200, ge=1, le=100_000, description="pings per pass")
    ping_interval_ms: float = Field(10.0, ge=2, le=10_000, description="gap between pings")
    streams: int = Field(1, ge=1, le=128, description="parallel TCP streams (iperf3 -P)")
    reverse: bool = Field(False, description="server sends (iperf3 -R)")
    udp_mbit: float | None = Field(None, gt=0, description="UDP at this rate instead of TCP")
    ping_size: int = Field(56, ge=0, le=65000, description="ping payload bytes")
    tls: bool | None = Field(None, description="overlay links over TLS (BENCH_TLS); "
                             "unset: TLS where the overlay build has it, else plain")
    limits: bool = Field(False, description="overlay's default per-agent limits (BENCH_LIMITS)")
    machines: int = Field(200, ge=1, le=10_000, description="join/config size (BENCH_MACHINES)")
    flood_mbit: float = Field(300.0, gt=0, description="flood offered load (BENCH_FLOOD_MBIT)")
    join_pool: int | None = Field(None, ge=1, le=100,
                                  description="agents per container in join (none: auto)")
    join_wait_s: float = Field(30.0, gt=0, le=3600, description="join's bounded wait")
    limit_pps: int | None = Field(None, gt=0, description="per-agent packets/s (limits on)")
    limit_mbit: float | None = Field(None, gt=0, description="per-agent Mbit/s (limits on)")


class AgentContainer(Model):
    """One container holding one agent, or a pool of agents sharing a namespace."""

    name: str
    switch: str
    agents: tuple[str, ...]


class Topology(Model):
    name: str = Field(pattern=NAME_PATTERN)
    overlay: str = Field("baseline", pattern=NAME_PATTERN,
                         description="the overlay adapter (checked by vnetbench.overlays)")
    conductor: bool = True
    switches: list[str] = Field(min_length=1, max_length=15)
    agents: list[AgentSpec] = Field(min_length=1)
    agent_pool: int = Field(1, ge=1, le=100, description="agent processes per container")
    start_gate: bool = Field(False, description="agents wait at the start gate")
    links: Links = Links()
    settings: Settings = Settings()
    overlay_options: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="per overlay, e.g. vnet: {images: {...}}")

    @field_validator("overlay")
    @classmethod
    def _known_overlay(cls, value: str, info: ValidationInfo) -> str:
        """Checked against the names the caller knows (the registry passes them in:
        this module knows no overlay)."""
        known = (info.context or {}).get("overlays")
        if known and value not in known:
            raise ValueError(f"unknown overlay '{value}' (known: {', '.join(sorted(known))})")
        return value

    @field_validator("switches", mode="before")
    @classmethod
    def _switch_count(cls, value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool):
            if value < 1:
                raise ValueError("there must be at least one switch")
            return [f"switch{i}" for i in range(1, value + 1)]
        return value

    @field_validator("switches")
    @classmethod
    def _switch_names(cls, value: list[str]) -> list[str]:
        for name in value:
            if not re.match(NAME_PATTERN, name):
                raise ValueError(f"switch name '{name}' must match {NAME_PATTERN}")
        if len(set(value)) != len(value):
            raise ValueError("switch names must be unique")
        return value

    @model_validator(mode="before")
    @classmethod
    def _agents_round_robin(cls, data: Any) -> Any:
        """`agents: N` places N agents on the switches in turn."""
        if not isinstance(data, dict) or not isinstance(data.get("agents"), int):
            return data
        count = data["agents"]
        if count < 1:
            raise ValueError("agents: there must be at least one agent")
        switches = cls._switch_count(data.get("switches", []))
        if not isinstance(switches, list) or not switches:
            return data
        placed = [
            {"name": f"agent{i + 1}", "switch": switches[i % len(switches)]} for i in range(count)
        ]
        return {**data, "agents": placed}

    @model_validator(mode="after")
    def _agents_on_known_switches(self) -> Topology:
        known = set(self.switches)
        problems = [
            f"agents.{i}.switch: unknown switch '{a.switch}' (known: {', '.join(self.switches)})"
            for i, a in enumerate(self.agents)
            if a.switch not in known
        ]
        names = [a.name for a in self.agents]
        if len(set(names)) != len(names):
            problems.append("agents: agent names must be unique")
        for switch in self.switches:
            containers = len([c for c in self.agent_containers() if c.switch == switch])
            if containers > MAX_AGENTS_PER_SITE:
                problems.append(
                    f"agents: more than {MAX_AGENTS_PER_SITE} agent containers on {switch} "
                    "(a Linux bridge takes at most 1023 ports); add switches or set "
                    "agent_pool to run several agents per container"
                )
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def agents_on(self, switch: str) -> list[AgentSpec]:
        return [a for a in self.agents if a.switch == switch]

    def agent_containers(self) -> list[AgentContainer]:
        """Agents grouped into containers: one each, or pools of `agent_pool` per switch."""
        if self.agent_pool == 1:
            return [AgentContainer(name=a.name, switch=a.switch, agents=(a.name,))
                    for a in self.agents]
        containers = []
        for switch in self.switches:
            names = [a.name for a in self.agents_on(switch)]
            for index in range(0, len(names), self.agent_pool):
                containers.append(AgentContainer(
                    name=f"pool-{switch}-{index // self.agent_pool + 1}", switch=switch,
                    agents=tuple(names[index:index + self.agent_pool])))
        return containers

    def container_of(self, agent: str) -> str:
        """The container (service) an agent runs in."""
        for container in self.agent_containers():
            if agent in container.agents:
                return container.name
        raise UserError(f"The topology '{self.name}' has no agent named '{agent}'.")

    def agent(self, name: str) -> AgentSpec:
        for candidate in self.agents:
            if candidate.name == name:
                return candidate
        raise UserError(f"The topology '{self.name}' has no agent named '{name}'.")


ENV_SETTINGS: dict[str, str] = {
    "BENCH_SECONDS": "seconds",
    "BENCH_PASSES": "passes",
    "BENCH_TLS": "tls",
    "BENCH_LIMITS": "limits",
    "BENCH_MACHINES": "machines",
    "BENCH_FLOOD_MBIT": "flood_mbit",
}


def settings_from_environment(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The seed's BENCH_* variables that are set, as settings overrides."""
    environ = dict(os.environ) if environ is None else environ
    return {field: environ[var] for var, field in ENV_SETTINGS.items() if environ.get(var)}


def _bool_words(value: str) -> str | bool:
    lowered = value.strip().lower()
    if lowered in ("on", "yes", "1", "true"):
        return True
    if lowered in ("off", "no", "0", "false"):
        return False
    return value


def parse_topology(
    data: Any, source: str, overrides: dict[str, Any] | None = None,
    overlays: Collection[str] = (),
) -> Topology:
    """Validate a parsed topology, reporting every problem at once; `overlays` are
    the overlay names to accept (vnetbench.overlays.OVERLAY_NAMES; empty: any)."""
    if not isinstance(data, dict):
        raise UserError(
            f"{source}: a topology must be a YAML mapping with at least 'name', "
            "'switches' and 'agents'; see topologies/two-sites.yml for an example."
        )
    if overrides:
        settings = dict(data.get("settings") or {})
        for key, value in overrides.items():
            settings[key] = _bool_words(value) if isinstance(value, str) else value
        data = {**data, "settings": settings}
    try:
        return Topology.model_validate(data, context={"overlays": tuple(overlays)})
    except ValidationError as error:
        raise UserError(describe_validation_error(error, source)) from None


def describe_validation_error(error: ValidationError, source: str) -> str:
    lines = [f"{source} is not a valid topology ({error.error_count()} problem(s)):"]
    for item in error.errors():
        location = ".".join(str(part) for part in item["loc"]) or "(top level)"
        message = str(item["msg"]).removeprefix("Value error, ")
        lines.append(f"  - {location}: {message}")
    lines.append("Fix these in the file (or the BENCH_* variable named) and run again.")
    return "\n".join(lines)


def load_topology(path: Path, overrides: dict[str, Any] | None = None,
                  overlays: Collection[str] = ()) -> Topology:
    """Read and validate a topology file; BENCH_* variables override settings."""
    if not path.is_file():
        raise UserError(
            f"There is no topology file at {path}. Give the path of a YAML topology, "
            "e.g. topologies/two-sites.yml."
        )
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as error:
        where = getattr(error, "problem_mark", None)
        place = f" at line {where.line + 1}, column {where.column + 1}" if where else ""
        raise UserError(
            f"{path} is not valid YAML{place}: {getattr(error, 'problem', error)}. "
            "Fix the syntax (indentation, colons, quotes) and run again."
        ) from None
    merged = {**settings_from_environment(), **(overrides or {})}
    return parse_topology(data, str(path), merged, overlays)
