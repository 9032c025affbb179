"""The topology model: what a YAML topology file declares, validated.

Pure data, no I/O beyond reading the file: the rest of vnetbench renders,
runs and measures what this module describes.
"""

from __future__ import annotations

import math
import os
import re
from collections import Counter
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Self, TypeVar

from pydantic import (
    AfterValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    create_model,
    field_serializer,
    field_validator,
    model_validator,
)
from pydantic.fields import FieldInfo

from vnetbench.core.model import (
    MEASURED,
    NAME_PATTERN,
    Measured,
    Milliseconds,
    Model,
    Percent,
    Rate,
    ScenarioSettings,
    duration_text,
    read_yaml,
)
from vnetbench.core.model import NAME_RULE as NAME_RULE
from vnetbench.core.model import Name as Name
from vnetbench.core.model import check_name as check_name
from vnetbench.core.units import (
    BURST_SECONDS,
    burst_bytes,
    format_milliseconds,
    format_rate,
)
from vnetbench.core.yamlfile import not_a_regular_file
from vnetbench.declared import DECLARATIONS
from vnetbench.errors import UserError
from vnetbench.model.faults.checks import Ground, schedule_problems
from vnetbench.model.faults.declared import CONTROL_PLANE as CONTROL_PLANE
from vnetbench.model.faults.declared import MAX_FAULT_MS as MAX_FAULT_MS
from vnetbench.model.faults.declared import MIN_FAULT_MS as MIN_FAULT_MS
from vnetbench.model.faults.declared import Fault as Fault
from vnetbench.model.workload import WorkloadSection

MAX_AGENTS_PER_SITE = 1000  # a Linux bridge takes at most 1023 ports
MAX_AGENT_POOL = 100  # agent processes in one container
MAX_SWITCHES = 15  # sites of a run's /16 block (addressing.py: /20 each after the backbone)
# Agents in all, whatever the pools: the largest room an overlay addresses is vNet's
# (its shipped virtual /16 holds 64770; the tunnel overlays run one agent a container,
# 15 x 1000), with room for a wider vNet network. Beyond it validation alone costs
# seconds and gigabytes (1.5 million agents: 7 s, 1.3 GB), and `agents: 1000000000`
# exhausted memory before any check ran.
MAX_AGENTS = 100_000
# swarm: a manager's Docker endpoint (docker -H), or "test" for vnetbench's test swarm
MANAGER_PATTERN = (r"test|(?:unix|npipe)://[A-Za-z0-9._/+-]+"
                   r"|(?:tcp|ssh)://(?:[A-Za-z0-9._-]+@)?[A-Za-z0-9.-]+(?::[0-9]{1,5})?/?")
# swarm: a node's hostname (RFC 1123 labels), as `docker node ls` names it
_NODE_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
NODE_PATTERN = rf"{_NODE_LABEL}(?:\.{_NODE_LABEL})*"



# Bounds of a link profile, each from what would otherwise not be what was asked.
# Rates: tbf queues rate x 50 ms plus its burst (16 KiB at least, shaping/plan.py);
# at 10 kbit that queue drains in 13 s, and what is still queued at a stream's end
# holds iperf3's report back, which must come within the 30 s its client has beyond
# the stream (measure/iperf.py CLIENT_GRACE_SECONDS).
MIN_RATE = 10_000
# tc refuses a tbf whose queue (rate x 50 ms + 4 ms of burst) exceeds 2**32 bytes,
# above ~630 Gbit/s; and no veth pair carries 100 Gbit/s (calibrate's raw veth pair
# measures tens), so a higher rate would leave the link unshaped while it says shaped.
MAX_RATE = 100 * 10**9
# delay + jitter, each way on one segment: a path between sites crosses three
# segments (site, backbone, site), so a round trip takes up to 6 x this; iperf3 needs
# about five round trips besides its stream (connect, parameters, the stream's own
# connect, results), which must fit its client's 30 s grace (CLIENT_GRACE_SECONDS).
MAX_HOLD_MS = 1000.0
# The userspace delay line (used where the kernel has no netem) queues at most this
# many packets and drops the rest: images/tools/vnetbench-shape QUEUE_PACKETS.
DELAY_LINE_PACKETS = 20000
ETHERNET_HEADER = 14
MIN_MTU = 576  # the datagram every IPv4 host must take (RFC 791); tunnels' lowest too
MAX_MTU = 65535  # IPv4's 16-bit total length; Linux's largest veth MTU (ETH_MAX_MTU)


def check_mtu(mtu: int) -> int:
    if not MIN_MTU <= mtu <= MAX_MTU:
        raise ValueError(f"an MTU of {mtu} bytes cannot be set: it is {MIN_MTU} to {MAX_MTU} "
                         f"({MIN_MTU}, the datagram every IPv4 host must accept; {MAX_MTU}, "
                         "the largest IPv4 packet and the largest MTU Linux gives a veth)")
    return mtu


Mtu = Annotated[int, AfterValidator(check_mtu)]
Own = TypeVar("Own", bound=ScenarioSettings)  # a scenario's own settings


def whole_seconds(seconds: float) -> float:
    """A stream's length as iperf3 runs it: -t is read as whole seconds (atoi)."""
    if not float(seconds).is_integer():
        raise ValueError(f"{seconds:g} is not a whole number of seconds: iperf3 reads -t as "
                         f"whole seconds (it would read {int(seconds)}); give e.g. "
                         f"{max(1, round(seconds))}")
    return seconds


class LinkProfile(Model):
    """Impairments of one network segment, each way (Mininet's convention)."""

    rate: Rate | None = None
    delay: Milliseconds = 0.0
    jitter: Milliseconds = 0.0
    loss: Percent = 0.0
    jitter_reorder: bool = False
    offloads: bool = Field(True, description="False: TSO/GSO/GRO off for per-packet loss")
    mtu: Mtu | None = Field(None, description="the segment's MTU, on both ends (bridge and "
                            f"veths), {MIN_MTU} to {MAX_MTU}")

    @field_validator("rate")
    @classmethod
    def _rate_in_range(cls, rate: int | None) -> int | None:
        if rate is None:
            return rate
        if rate <= 0:
            raise ValueError("a rate of 0 shapes nothing (the link would be left unshaped "
                             "while it says rate 0): leave rate out for an unshaped link, or "
                             f"give at least {format_rate(MIN_RATE)}")
        if rate < MIN_RATE:
            raise ValueError(
                f"{format_rate(rate)} is below {format_rate(MIN_RATE)}: the shaper's queue "
                "(50 ms of the rate plus a burst of at least 16 KiB) would take longer than "
                "the 30 s iperf3's client has beyond its stream to drain")
        if rate > MAX_RATE:
            raise ValueError(
                f"{format_rate(rate)} is above {format_rate(MAX_RATE)}: no veth pair carries "
                "that (so the link would be unshaped while it says shaped), and above "
                "~630gbit tc refuses the shaper's queue (2**32 bytes at most)")
        return rate

    @model_validator(mode="after")
    def _jitter_needs_a_delay(self) -> LinkProfile:
        if self.jitter and not self.delay:
            raise ValueError("jitter varies a delay, and there is none: give both, e.g. "
                             "delay: 10ms, jitter: 2ms")
        return self

    @model_validator(mode="after")
    def _delay_in_range(self) -> LinkProfile:
        delay, jitter = duration_text(self.delay), duration_text(self.jitter)
        if self.jitter > self.delay:
            raise ValueError(
                f"jitter {jitter} is more than delay {delay}: each packet is held delay +- a "
                "uniform jitter, and below zero it cannot be held (netem and the delay line "
                "cut it at 0), so the link would not have the delay and jitter it says; keep "
                "jitter at most the delay")
        if self.delay + self.jitter > MAX_HOLD_MS:
            raise ValueError(
                f"delay {delay} + jitter {jitter} is more than {MAX_HOLD_MS:g}ms each way: a "
                "path between sites crosses three segments, so a round trip would take more "
                "than 6 s, and iperf3's five or so round trips besides its stream would not "
                "fit the 30 s its client has beyond the stream (measure/iperf.py "
                "CLIENT_GRACE_SECONDS)")
        return self

    @model_validator(mode="after")
    def _shaper_holds_the_rate(self) -> LinkProfile:
        """The queues that shape the link must hold what the rate puts in them."""
        if not self.rate:
            return self
        packet = (self.mtu or 1500) + ETHERNET_HEADER
        in_flight = self.rate / 8 * (self.delay + self.jitter) / 1000 / packet
        if in_flight > DELAY_LINE_PACKETS:
            most = DELAY_LINE_PACKETS * packet * 8 / ((self.delay + self.jitter) / 1000)
            raise ValueError(
                f"rate {format_rate(self.rate)} held for delay + jitter "
                f"{duration_text(self.delay + self.jitter)} is {in_flight:.0f} "
                f"full-size packets in flight; the delay line (used where the kernel has no "
                f"netem) queues at most {DELAY_LINE_PACKETS} and drops the rest, so the link "
                f"would carry less than its rate: give at most {int(most // 1e6)}mbit or a "
                "shorter delay")
        if self.mtu and burst_bytes(self.rate) < packet:
            raise ValueError(
                f"mtu {self.mtu} at rate {format_rate(self.rate)}: the shaper's token bucket "
                f"holds {burst_bytes(self.rate)} bytes (4 ms of the rate, 16 KiB at least), "
                f"less than one full-size frame ({packet} bytes), and tbf drops every such "
                f"frame: give a rate of at least {math.ceil(packet * 8 / BURST_SECONDS / 1e6)}mbit"
                " or a smaller "
                "mtu")
        return self

    @field_serializer("rate")
    def _rate_text(self, rate: int | None) -> str | None:
        return format_rate(rate) if rate is not None else None

    @field_serializer("delay", "jitter")
    def _time_text(self, milliseconds: float) -> str:
        return format_milliseconds(milliseconds)

    @property
    def is_shaped(self) -> bool:
        return bool(self.rate or self.delay or self.jitter or self.loss)

    def describe(self) -> str:
        """'rate=100mbit delay=10ms loss=1% offloads=on', or 'unshaped'."""
        if not self.is_shaped and self.offloads and not self.mtu:
            return "unshaped"
        parts = [f"rate={format_rate(self.rate)}"] if self.rate else []
        parts += [f"delay={format_milliseconds(self.delay)}"] if self.delay else []
        parts += [f"jitter={format_milliseconds(self.jitter)}"] if self.jitter else []
        parts += [f"loss={self.loss:g}%"] if self.loss else []
        parts += ["reorder"] if self.jitter_reorder else []
        parts += [f"mtu={self.mtu}"] if self.mtu else []
        parts.append(f"offloads={'on' if self.offloads else 'off'}")
        return " ".join(parts)


class Links(Model):
    site: LinkProfile = LinkProfile()
    backbone: LinkProfile = LinkProfile()


class AgentSpec(Model):
    name: Name
    switch: str
    link: LinkProfile | None = None  # overrides the site profile on this agent's interface


class SharedSettings(Model):
    """Scenario settings: those several scenarios share; `Settings` adds each registered
    scenario's own (its sub-model, declared with it) under its name. The seed's BENCH_*
    variables override them. Each is also an option of `vnetbench run` by its flat name
    (vnetbench/commands/options.py), its description the option's help."""

    seconds: Measured[float] = Field(10.0, gt=0, le=3600,
                                     description="TCP stream length (BENCH_SECONDS).")
    # repetitions of each measurement
    passes: Measured[int] = Field(3, ge=1, le=100, description="Passes per scenario.")
    pings: Measured[int] = Field(200, ge=1, le=100_000, description="Pings per pass.")
    ping_interval_ms: Measured[float] = Field(10.0, ge=2, le=10_000,
                                    description="Gap between pings (whole milliseconds).")
    streams: Measured[int] = Field(1, ge=1, le=128,
                                   description="Parallel TCP streams (iperf3 -P).")
    reverse: Measured[bool] = Field(False, description="Server sends (iperf3 -R).")
    udp_mbit: Measured[float | None] = Field(None, gt=0,
                                             description="UDP at this rate instead of TCP.")
    ping_size: Measured[int] = Field(56, ge=0, le=65000, description="Ping payload bytes.")
    tls: bool | None = Field(None, description="Overlay links over TLS (BENCH_TLS); unset: "
                             "TLS where the overlay build has it, else plain.")
    limits: bool = Field(False,
                         description="The overlay's default per-agent limits (BENCH_LIMITS).")
    # false: the overlay's data path unencrypted where it can be (refused where it cannot);
    # unset: each overlay's default. On the command line only its off switch, --no-encryption.
    encryption: bool | None = Field(None, description="The overlay's data unencrypted where "
                                    "it can be (refused where not).",
                                    json_schema_extra={"option": "off switch"})
    machines: int = Field(200, ge=1, le=10_000,
                          description="join/config/room size (BENCH_MACHINES).")
    limit_pps: int | None = Field(None, gt=0, description="Per-agent packets/s (limits on).")
    limit_mbit: float | None = Field(None, gt=0, description="Per-agent Mbit/s (limits on).")
    # where it can be set; unset: each overlay's default
    tunnel_mtu: Mtu | None = Field(None, description="The overlay's tunnel MTU (refused where "
                                   "it cannot be set).")
    udp_length: Measured[int | None] = Field(None, ge=16, le=65507,
                                   description="UDP datagram payload bytes (iperf3 -l).")
    # each client container runs its own iperf3 against its own server (not -P)
    clients: Measured[int] = Field(1, ge=1, le=32,
                         description="Client containers at once, each its own iperf3.")
    # none: ping_size alone
    ping_sizes: Measured[tuple[int, ...]] = Field((), max_length=10,
                                        description="Ping payloads measured in turn, e.g. "
                                        "100,500,1000.")

    _whole_seconds = field_validator("seconds")(whole_seconds)

    @field_validator("ping_interval_ms")
    @classmethod
    def _whole_milliseconds(cls, interval: float) -> float:
        if not interval.is_integer():
            raise ValueError(f"{interval:g} is not a whole number of milliseconds: ping keeps "
                             f"its interval (-i) in whole milliseconds (it would wait "
                             f"{int(interval)} ms); give e.g. {round(interval)}")
        return interval

    @field_validator("ping_sizes")
    @classmethod
    def _ping_sizes_in_range(cls, sizes: tuple[int, ...]) -> tuple[int, ...]:
        wrong = [s for s in sizes if not 0 <= s <= 65000]
        if wrong:
            raise ValueError(f"ping payloads are 0 to 65000 bytes; {wrong} are not")
        return sizes

    def measured_ping_sizes(self) -> tuple[int, ...]:
        return self.ping_sizes or (self.ping_size,)

    def of(self, kind: type[Own]) -> Own:
        """A scenario's own settings, typed (`settings.of(RoomSettings).rate`)."""
        own = getattr(self, scenario_named_by(kind))
        if not isinstance(own, kind):
            raise TypeError(f"settings.{scenario_named_by(kind)} is not {kind.__name__}")
        return own

    @model_validator(mode="before")
    @classmethod
    def _flat_names_nested(cls, data: Any) -> Any:
        """A scenario's settings by their flat names (room_rate: files written before,
        the options, BENCH_* variables, overrides) under its name (room: {rate})."""
        return nested_settings(data) if isinstance(data, dict) else data

    def flat(self) -> dict[str, Any]:
        """Every setting by its flat name (room_rate), as the options name them."""
        data = self.model_dump(mode="json")
        for name, kind in SCENARIO_SETTINGS.items():
            data |= {kind.flat_name(k): v for k, v in data.pop(name).items()}
        return data

    def updated(self, changes: Mapping[str, Any]) -> Self:
        """These settings with some changed, by flat name (room_rate) or nested, as
        model_copy changes them: the values are taken as they are (already valid)."""
        nested = nested_settings(dict(changes))
        for name in SCENARIO_SETTINGS:
            if isinstance(nested.get(name), dict):
                nested[name] = getattr(self, name).model_copy(update=nested[name])
        return self.model_copy(update=nested)

    @model_validator(mode="after")
    def _encryption_and_tls_agree(self) -> SharedSettings:
        if self.encryption is True:
            raise ValueError("encryption: true is every overlay's default; leave it out "
                             "(encryption: false turns it off where the overlay can)")
        if self.encryption is False and self.tls:
            raise ValueError("tls: true and encryption: false contradict each other; drop "
                             "one (encryption: false turns TLS off where the overlay has it)")
        return self


# each registered scenario's own settings (vnetbench/declared/), by its name
SCENARIO_SETTINGS: dict[str, type[ScenarioSettings]] = {
    d.name: d.settings for d in DECLARATIONS if d.settings is not None}


def scenario_named_by(kind: type[ScenarioSettings]) -> str:
    """The scenario whose own settings these are (RoomSettings -> room)."""
    name = next((n for n, k in SCENARIO_SETTINGS.items() if k is kind), None)
    if name is None:
        raise KeyError(f"{kind.__name__} is no registered scenario's settings "
                       "(vnetbench/declared/__init__.py registers a declaration)")
    return name


def settings_named_twice(shared: type[SharedSettings],
                         scenarios: Mapping[str, type[ScenarioSettings]]) -> list[str]:
    """Names two settings would share: a scenario's name or a flat name (room_rate)
    that is a shared setting's or another scenario's."""
    names = Counter([*shared.model_fields, *scenarios,
                     *(kind.flat_name(field) for kind in scenarios.values()
                       for field in kind.model_fields)])
    return sorted(name for name, count in names.items() if count > 1)


def with_scenario_settings(shared: type[SharedSettings],
                           scenarios: Mapping[str, type[ScenarioSettings]]
                           ) -> type[SharedSettings]:
    """The settings model: the shared settings, and each scenario's own under its name
    (room: {rate}), each also read by its flat name (room_rate), as files before held
    them. Built from the registry, so that the model names no scenario."""
    twice = settings_named_twice(shared, scenarios)
    if twice:
        raise TypeError(f"settings named twice: {', '.join(twice)}; rename the scenario "
                        "or its settings' prefix")
    own: dict[str, Any] = {name: (kind, kind()) for name, kind in scenarios.items()}
    return create_model("Settings", __base__=shared, __module__=__name__,
                        __doc__=shared.__doc__, **own)


if TYPE_CHECKING:  # the checker reads a scenario's own settings through `of`
    Settings = SharedSettings
else:
    Settings = with_scenario_settings(SharedSettings, SCENARIO_SETTINGS)


def setting_fields() -> dict[str, FieldInfo]:
    """Every setting by its flat name (a scenario's prefixed: room_rate), the shared
    ones first: what `run`'s options and the BENCH_* variables set."""
    shared = {n: f for n, f in Settings.model_fields.items() if n not in SCENARIO_SETTINGS}
    return shared | {kind.flat_name(n): f for kind in SCENARIO_SETTINGS.values()
                     for n, f in kind.model_fields.items()}


def nested_settings(data: dict[str, Any]) -> dict[str, Any]:
    """Flat names (room_rate) moved under their scenario (room: {rate}); a flat name
    wins over the same setting nested (it is the override's form)."""
    nested = dict(data)
    for name, kind in SCENARIO_SETTINGS.items():
        flat = {field: nested.pop(key) for key in list(nested)
                if (field := kind.field_of(key)) is not None}
        if flat:
            given = nested.get(name) or {}
            given = given.model_dump() if isinstance(given, ScenarioSettings) else given
            nested[name] = {**given, **flat} if isinstance(given, dict) else given
    return nested


def flat_setting(location: tuple[int | str, ...]) -> str | None:
    """The flat name of the setting at a validation error's location
    (settings.room.rate -> room_rate), or None."""
    if len(location) < 2 or location[0] != "settings":
        return None
    kind = SCENARIO_SETTINGS.get(str(location[1]))
    if kind is None:
        return str(location[1])
    return kind.flat_name(str(location[2])) if len(location) > 2 else None


# Settings a measurement reads, not the stack (each marked Measured where it is
# declared), by flat name: topologies that differ only in these run on the same
# containers (a method's steps share a stack).
MEASUREMENT_SETTINGS = frozenset(name for name, field in setting_fields().items()
                                 if MEASURED in field.metadata)


class AgentContainer(Model):
    """One container holding one agent, or a pool of agents sharing a namespace."""

    name: str
    switch: str
    agents: tuple[str, ...]


class MeasurePair(Model):
    """The agents a throughput pass measures: `from` (the client) to `to` (the server).
    Without it, the first agents of the first and last switch that have one."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
    source: str = Field(alias="from")
    target: str = Field(alias="to")


def known_name(value: str, info: ValidationInfo, kind: str) -> str:
    """Checked against the names the caller knows (the registries pass them in as the
    context's "engines" and "overlays": this module knows none)."""
    known = (info.context or {}).get(f"{kind}s")
    if known and value not in known:
        raise ValueError(f"unknown {kind} '{value}' (known: {', '.join(sorted(known))})")
    return value


class EngineSection(Model):
    """`engine:`: which engine runs the topology, and that engine's own options (a
    swarm's manager and where each site runs); none of them is the topology's."""

    name: str = Field("compose", description="the engine, by its name in the engine "
                      "registry (vnetbench.engines.ENGINES): compose, this machine's, by "
                      "default; swarm, several hosts")
    hosts: dict[str, str] = Field(
        default_factory=dict, description="swarm: a site (switch) or 'conductor' -> the "
        "node that runs it; unnamed sites spread over the nodes")
    manager: str | None = Field(
        None, description="swarm: a manager's Docker endpoint, or 'test' for the test "
        "swarm (else $VNETBENCH_SWARM, or this machine's engine if it manages a swarm)")

    @field_validator("name")
    @classmethod
    def _known_engine(cls, value: str, info: ValidationInfo) -> str:
        return known_name(value, info, "engine")

    @field_validator("manager")
    @classmethod
    def _manager_form(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(MANAGER_PATTERN, value):
            raise ValueError(f"{value!r} is not a Docker endpoint: give the manager as "
                             "ssh://user@host, tcp://host:2376 or unix:///path/docker.sock "
                             "(or 'test' for the test swarm of 'vnetbench swarm up')")
        return value

    @field_validator("hosts")
    @classmethod
    def _hosts_are_node_names(cls, value: dict[str, str]) -> dict[str, str]:
        wrong = [f"{site}: {node!r}" for site, node in value.items()
                 if not isinstance(node, str) or not re.fullmatch(NODE_PATTERN, node)]
        if wrong:
            raise ValueError(f"{', '.join(wrong)} is not a swarm node's name: give the "
                             "hostname 'docker node ls' shows, e.g. node-a")
        return value


class Topology(Model):
    name: Name
    overlay: str = Field("baseline", pattern=NAME_PATTERN,
                         description="the overlay adapter (checked by vnetbench.overlays)")
    conductor: bool = True
    switches: list[str] = Field(min_length=1, max_length=MAX_SWITCHES)
    agents: list[AgentSpec] = Field(min_length=1)
    agent_pool: int = Field(1, ge=1, le=MAX_AGENT_POOL,
                            description="agent processes per container")
    start_gate: bool = Field(False, description="agents wait at the start gate")
    links: Links = Links()
    settings: Settings = Settings()
    measure: MeasurePair | None = None
    faults: list[Fault] = Field(default_factory=list, max_length=10,
                                description="failover: the faults each pass injects, in "
                                "turn (none: the standard set)")
    workload: WorkloadSection | None = Field(
        None, description="room: the load's phases and at-once events "
        "(vnetbench/model/workload.py), or a shipped profile's name (contest); "
        "none: the room's steady rate")
    slo: tuple[str, ...] = Field(
        (), max_length=50, description="targets `run` checks when no --slo is given, in "
        "--slo's form (SCENARIO.METRIC<=VALUE), one a line or separated by commas: a "
        "venue's (the statement reaches every machine, a phase's p99, no request lost); "
        "checked against the scenarios and the workload by vnetbench/analysis/venue.py")
    overlay_options: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="per overlay, e.g. vnet: {images: {...}}")
    engine: EngineSection = Field(
        default_factory=lambda: EngineSection(), description="the engine that runs it: "
        "its name in the engine registry (vnetbench.engines.ENGINES; compose, this "
        "machine's, by default), or a section of its name and that engine's options "
        "(engine: {name: swarm, manager: test, hosts: {switch1: node-a}})")

    @field_validator("slo", mode="before")
    @classmethod
    def _slo_clauses(cls, value: Any) -> Any:
        """`slo: a<=1,b<=2` as --slo takes it, or a list of clauses (each may hold
        several, separated by commas)."""
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list | tuple) or not all(isinstance(i, str) for i in items):
            raise ValueError(f"{value!r} is not a list of targets: give each as --slo "
                             "takes it, SCENARIO.METRIC<=VALUE or >=VALUE, e.g. "
                             "[room.phase_p99_ms_steady<=500, room.phase_failed_steady<=0]")
        return tuple(part.strip() for item in items for part in item.split(",")
                     if part.strip())

    @model_validator(mode="before")
    @classmethod
    def _engine_section(cls, data: Any) -> Any:
        """`engine: swarm` as a section of its name; `hosts:` and `manager:` at the top,
        as files had them before the engine section, moved into it."""
        if not isinstance(data, dict):
            return data
        engine = data.get("engine")
        engine = {"name": engine} if isinstance(engine, str) else engine
        moved = {key: data[key] for key in ("hosts", "manager") if key in data}
        if moved and isinstance(engine, dict):
            twice = sorted(set(moved) & set(engine))
            if twice:
                raise ValueError(f"{' and '.join(twice)} given both at the top and under "
                                 "engine: give them under engine: only")
        if moved:
            engine = {**(engine or {}), **moved}
        rest = {key: value for key, value in data.items() if key not in moved}
        return rest if engine is None else {**rest, "engine": engine}

    @model_validator(mode="after")
    def _hosts_name_sites(self) -> Topology:
        unknown = sorted(set(self.engine.hosts) - {*self.switches, "conductor"})
        if unknown:
            raise ValueError(f"engine.hosts places {', '.join(unknown)}, which the topology "
                             f"does not have: use switch names ({', '.join(self.switches)}) "
                             "or 'conductor'")
        return self

    @field_validator("overlay")
    @classmethod
    def _known_overlay(cls, value: str, info: ValidationInfo) -> str:
        return known_name(value, info, "overlay")

    @field_validator("agents", mode="before")
    @classmethod
    def _agents_form(cls, value: Any) -> Any:
        if not isinstance(value, list):
            raise ValueError(f"'{value}' is neither a number of agents (e.g. agents: 10) nor "
                             "a list of {name: ..., switch: ...}")
        return value

    @field_validator("switches", mode="before")
    @classmethod
    def _switch_count(cls, value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool):
            if value < 1:
                raise ValueError("there must be at least one switch")
            if value > MAX_SWITCHES:  # before the names are made: 10**30 would never end
                raise ValueError(f"a topology has at most {MAX_SWITCHES} switches, not {value}")
            return [f"switch{i}" for i in range(1, value + 1)]
        return value

    @field_validator("switches")
    @classmethod
    def _switch_names(cls, value: list[str]) -> list[str]:
        for name in value:
            check_name(name)
        repeated = sorted({n for n in value if value.count(n) > 1})
        if repeated:
            raise ValueError(f"switch names must be unique: {', '.join(repeated)} repeated")
        return value

    @staticmethod
    def _agents_bounded(data: dict[str, Any]) -> None:
        """No more agents than the switches' bridges hold in containers of agent_pool,
        nor than MAX_AGENTS: counted before any list is expanded or validated."""
        agents = data.get("agents")
        count = len(agents) if isinstance(agents, list) else agents
        if not isinstance(count, int) or isinstance(count, bool):
            return
        switches = data.get("switches")
        sites = len(switches) if isinstance(switches, list) else switches
        sites = sites if isinstance(sites, int) and 1 <= sites <= MAX_SWITCHES else MAX_SWITCHES
        pool = data.get("agent_pool", 1)
        pool = pool if isinstance(pool, int) and 1 <= pool <= MAX_AGENT_POOL else MAX_AGENT_POOL
        most = min(MAX_AGENTS, sites * MAX_AGENTS_PER_SITE * pool)
        if count > most:
            raise ValueError(
                f"agents: {count} agents are more than {most}: {sites} switch(es) take at "
                f"most {MAX_AGENTS_PER_SITE} agent containers each (a Linux bridge takes at "
                f"most 1023 ports) of agent_pool {pool}, and a run has at most {MAX_AGENTS} "
                "agents (the most any overlay addresses); give fewer agents, more switches "
                "or a larger agent_pool")

    @model_validator(mode="before")
    @classmethod
    def _agents_round_robin(cls, data: Any) -> Any:
        """`agents: N` places N agents on the switches in turn (once N is bounded)."""
        if isinstance(data, dict):
            cls._agents_bounded(data)
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
        repeated = sorted(n for n, count in Counter(names).items() if count > 1)
        if repeated:
            problems.append(f"agents: agent names must be unique: {', '.join(repeated)} "
                            "repeated")
        clashes = sorted(set(names) & known)
        if clashes:
            problems.append(f"agents: {', '.join(clashes)} is also a switch's name; every "
                            "node needs its own name (its container, keys and logs use it)")
        per_site = Counter(c.switch for c in self.agent_containers())
        for switch in self.switches:
            if per_site[switch] > MAX_AGENTS_PER_SITE:
                problems.append(
                    f"agents: more than {MAX_AGENTS_PER_SITE} agent containers on {switch} "
                    "(a Linux bridge takes at most 1023 ports); add switches or set "
                    "agent_pool to run several agents per container"
                )
        if self.measure is not None:
            problems += self._measure_problems(set(names))
        problems += self.fault_problems()
        problems += [f"agents.{i}.link.mtu: an MTU belongs to a segment; set it on "
                     "links.site or links.backbone" for i, a in enumerate(self.agents)
                     if a.link is not None and a.link.mtu]
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def fault_problems(self, concurrent: bool = False) -> list[str]:
        """The faults against this topology (vnetbench/model/faults/checks.py); `concurrent`:
        as one schedule over one load, where events on one target may not overlap."""
        backbone = self.links.backbone
        return schedule_problems(self.faults, Ground(
            tuple(self.switches), self.settings.machines, backbone.delay + backbone.jitter,
            MAX_HOLD_MS, self._backbone_problem), concurrent)

    def _backbone_problem(self, quantity: str, value: float) -> str | None:
        """Why the backbone with `quantity` (loss, delay, rate) at `value` is no link
        profile, or None."""
        written = {"delay": f"{value!r}ms", "rate": f"{int(value)}bit"}.get(quantity, value)
        try:
            LinkProfile.model_validate({**self.links.backbone.model_dump(), quantity: written})
        except ValidationError as error:
            return "; ".join(str(e["msg"]).removeprefix("Value error, ")
                             for e in error.errors())
        return None

    def _measure_problems(self, names: set[str]) -> list[str]:
        assert self.measure is not None
        pair = (self.measure.source, self.measure.target)
        unknown = [n for n in pair if n not in names]
        if unknown:
            return [f"measure: no agent named {', '.join(unknown)} (agents: "
                    f"{', '.join(sorted(names)[:8])}{'...' if len(names) > 8 else ''})"]
        if pair[0] == pair[1]:
            return [f"measure: from and to are both {pair[0]}; name two different agents"]
        return []

    def stack_key(self) -> str:
        """What the containers depend on: equal keys run on the same stack."""
        data = self.model_dump(mode="json")
        data["settings"] = {k: v for k, v in self.settings.flat().items()
                            if k not in MEASUREMENT_SETTINGS}
        data.pop("faults")  # what failover injects, not what the containers are
        data.pop("workload")  # what the room's machines ask, not what they are
        data.pop("slo")  # what the results are judged against
        return repr(sorted(data.items()))

    def agents_on(self, switch: str) -> list[AgentSpec]:
        return [a for a in self.agents if a.switch == switch]

    def agent_containers(self) -> list[AgentContainer]:
        """Agents grouped into containers: one each, or pools of `agent_pool` per switch."""
        if self.agent_pool == 1:
            return [AgentContainer(name=a.name, switch=a.switch, agents=(a.name,))
                    for a in self.agents]
        by_switch: dict[str, list[str]] = {switch: [] for switch in self.switches}
        for agent in self.agents:
            by_switch[agent.switch].append(agent.name)
        return [AgentContainer(
                    name=f"pool-{switch}-{index // self.agent_pool + 1}", switch=switch,
                    agents=tuple(names[index:index + self.agent_pool]))
                for switch, names in by_switch.items()
                for index in range(0, len(names), self.agent_pool)]

    def container_of(self, agent: str) -> str:
        """The container (service) an agent runs in (its own, without pools: no list of
        containers built for each agent asked, which made a 10000-machine check take 18 s)."""
        if self.agent_pool == 1 and any(a.name == agent for a in self.agents):
            return agent
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
    overlays: Collection[str] = (), origins: dict[str, str] | None = None,
    engines: Collection[str] = (),
) -> Topology:
    """Validate a parsed topology, reporting every problem at once; `overlays` and
    `engines` are the names to accept (vnetbench.overlays.OVERLAY_NAMES,
    vnetbench.engines.ENGINE_NAMES; empty: any);
    `origins` names where each overridden setting came from (--seconds, BENCH_SECONDS)."""
    if not isinstance(data, dict):
        raise UserError(
            f"{source}: a topology must be a YAML mapping with at least 'name', "
            "'switches' and 'agents'; see topologies/two-sites.yml for an example."
        )
    if overrides and isinstance(data.get("settings") or {}, dict):
        settings = dict(data.get("settings") or {})
        for key, value in overrides.items():
            settings[key] = _bool_words(value) if isinstance(value, str) else value
        data = {**data, "settings": settings}
    try:
        return Topology.model_validate(data, context={"overlays": tuple(overlays),
                                                      "engines": tuple(engines)})
    except ValidationError as error:
        raise UserError(describe_validation_error(error, source, origins or {})) from None


def describe_validation_error(error: ValidationError, source: str,
                              origins: dict[str, str] | None = None) -> str:
    """Every problem with its location: the file's key, or the option or variable
    that set it (`settings.seconds (from --seconds)`)."""
    origins = origins or {}
    lines, from_file = [], 0
    for item in error.errors():
        location = ".".join(str(part) for part in item["loc"]) or "(top level)"
        message = str(item["msg"]).removeprefix("Value error, ")
        setting = flat_setting(item["loc"])
        if setting and setting != item["loc"][1]:
            location = f"settings.{setting}"
        origin = origins.get(setting) if setting else None
        if origin:
            lines.append(f"  - {origin} (settings.{setting}): {message}")
        else:
            from_file += 1
            lines.append(f"  - {location}: {message}")
    given = sorted({o for o in origins.values() if any(o in line for line in lines)})
    head = (f"{source} is not a valid topology ({error.error_count()} problem(s)):"
            if from_file else f"Not valid for {source}: {', '.join(given)}")
    if from_file:
        tail = "Fix these in the file" + (f" and {', '.join(given)}" if given else "")
    else:
        tail = f"Give {', '.join(given)} a valid value"
    tail += " and run again."
    return "\n".join([head, *lines, tail])


def load_topology(path: Path, overrides: dict[str, Any] | None = None,
                  overlays: Collection[str] = (), engines: Collection[str] = ()) -> Topology:
    """Read and validate a topology file; BENCH_* variables override settings."""
    if path.is_dir():
        raise UserError(f"{path} is a directory; give the path of a topology file in it, "
                        "e.g. topologies/two-sites.yml.")
    if not path.is_file():
        raise UserError(not_a_regular_file(path, "Give the path of a YAML topology, e.g. "
                                           "topologies/two-sites.yml.") or
            f"There is no topology file at {path}. Give the path of a YAML topology, "
            "e.g. topologies/two-sites.yml."
        )
    data = read_yaml(path, "a topology file, e.g. topologies/two-sites.yml")
    environment = settings_from_environment()
    origins = {field: var for var, field in ENV_SETTINGS.items() if field in environment}
    origins |= {field: f"--{field.replace('_', '-')}" for field in overrides or {}}
    merged = {**environment, **(overrides or {})}
    return parse_topology(data, str(path), merged, overlays, origins, engines)
