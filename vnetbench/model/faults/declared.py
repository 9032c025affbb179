"""One entry of a topology's `faults:`: a fault at a known instant, or an event of a
schedule of faults (a flap, a partition, a ramp, churn).

Each entry is checked on its own here (its keys, its spans); what needs the
topology (switch names, the room's size, the backbone's profile, events that
overlap on one target) is checked in vnetbench/model/faults/checks.py, and a schedule
becomes timed steps in vnetbench/faults/schedule.py.
"""

from __future__ import annotations

import math
import re
from typing import Annotated, Any, Literal

from pydantic import (
    BeforeValidator,
    ConfigDict,
    Field,
    field_serializer,
    model_validator,
)

from vnetbench.core.model import Milliseconds, Model, Percent, duration_text
from vnetbench.core.units import format_rate, parse_milliseconds, parse_percent, parse_rate

# Bounds of a fault (failover): each span long enough to be seen by probes 10 ms apart,
# short enough that a pass stays minutes (a pass waits `at` + the fault + its window).
MAX_FAULT_MS = 60_000.0
MIN_FAULT_MS = 100.0  # ten probes at 10 ms: shorter would be a blip, not a measured outage
# A schedule's `at` is bound by its load instead (faults/on_stack.py expand_within: the
# last step within the room's seconds or its workload's phases, which may last hours);
# failover's by MAX_FAULT_MS (scenarios/failover.py: it waits `at` after its probes)
MAX_SCHEDULE_AT_MS = 24 * 3600 * 1000.0
CONTROL_PLANE = "control-plane"  # `kill:` of the overlay's control-plane role
SERVER = "server"  # `kill:` of the room's server (the agent the room names so)
LINK_FAULT_SEGMENTS = ("backbone",)
MAX_FLAP_TIMES = 50  # a flap of 50 x (100 ms + 100 ms) already fills 10 s
# A ramp changes the backbone in steps of at most this much time: each level then holds
# five of the room's 100 ms timeline bins (at 50 machines x 5/s, some 125 requests a
# level), and it is 25 times the 20 ms a staged step may be late (window.py
# LATE_BOUND_S), so the levels are the ones declared, not the mechanism's jitter.
RAMP_STEP_MS = 500.0
MIN_RAMP_STEP_MS = 100.0  # no shorter than a fault (MIN_FAULT_MS)
FaultKind = Literal["switch-restart", "switch-kill", "control-plane-restart",
                    "control-plane-kill", "backbone-down", "loss-burst", "delay-spike"]
RampOf = Literal["loss", "delay", "rate"]
# the key that makes an entry what it is, and the keys each kind takes besides `at`
EVENT_KEYS = ("kill", "link", "loss", "delay", "flap", "partition", "ramp", "churn")
NEEDS: dict[str, tuple[str, ...]] = {
    "kill": (), "link": ("for",), "loss": ("for",), "delay": ("for",),
    "flap": ("times", "down", "up"), "partition": ("for",), "ramp": ("from", "to", "over"),
    "churn": ("over",)}
TAKES: dict[str, tuple[str, ...]] = {"kill": ("restart_after",), "ramp": ("step", "hold")}
FIELD_OF = {"for": "duration", "from": "start", "to": "end"}  # keys that are Python words
EXAMPLES = {
    "kill": "{at: 5s, kill: switch2, restart_after: 3s}",
    "link": "{at: 5s, link: backbone, for: 3s}", "loss": "{at: 5s, loss: 100%, for: 2s}",
    "delay": "{at: 5s, delay: 200ms, for: 2s}",
    "flap": "{at: 5s, flap: backbone, times: 5, down: 1s, up: 1s}",
    "partition": "{at: 5s, partition: [[switch1], [switch2, switch3]], for: 3s}",
    "ramp": "{at: 5s, ramp: loss, from: 0%, to: 20%, over: 10s}",
    "churn": "{at: 5s, churn: 20%, over: 10s}"}
RAMP_UNITS = {"loss": "percentage", "delay": "duration", "rate": "rate"}
RAMP_PARSERS = {"loss": parse_percent, "delay": parse_milliseconds, "rate": parse_rate}


class MachineCount(Model):
    """`kill: {machines: N}`: N of the room's machines, chosen when the schedule is
    expanded (deterministically, and named there)."""

    machines: int = Field(ge=1)

    def __str__(self) -> str:
        return f"{self.machines} machine{'s' if self.machines != 1 else ''}"


def role_form(value: Any) -> Any:
    """`{machines: 3}`, or `machines:3` as `--fault kill=machines:3` gives it."""
    if isinstance(value, str) and (found := re.fullmatch(r"\s*machines\s*:\s*(\S+)\s*", value)):
        value = {"machines": found[1]}
    if isinstance(value, dict):
        count = str(value.get("machines"))
        if set(value) != {"machines"} or not count.isdigit() or int(count) < 1:
            raise ValueError(f"{value!r} is no role: a role is a switch's name, "
                             f"'{CONTROL_PLANE}', '{SERVER}', or {{machines: N}} with N a "
                             "whole number of the room's machines, at least 1")
        return MachineCount(machines=int(count))
    return value


Role = Annotated[str | MachineCount, BeforeValidator(role_form)]


class Fault(Model):
    """One fault at a known instant: a role (a switch, the control plane, the room's
    server, N machines) killed, started again after `restart_after` or never; the
    backbone down, a loss burst or a delay spike on it for `for`; or an event of a
    schedule: the backbone flapping `times` (down, then up), a partition of the
    switches for `for`, a ramp of the backbone's loss, delay or rate from one value to
    another `over` a span, churn (a share of the machines restarted over a span).
    Failover injects the first kinds one at a time (scenarios/failover.py); a
    schedule's steps come from vnetbench/faults/schedule.py."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True,
                              allow_inf_nan=False)
    at: Milliseconds = Field(2000.0, description="when, after the probes answer (a "
                             "schedule: after the load's start)")
    kill: Role | None = Field(None, description="a switch's name, 'control-plane', "
                              "'server' or {machines: N}")
    restart_after: Milliseconds | None = None
    link: Literal["backbone"] | None = Field(None, description="down (100 % loss) for `for`")
    loss: Percent | None = Field(None, description="a loss burst on the backbone for `for`")
    delay: Milliseconds | None = Field(None, description="added to the backbone for `for`")
    duration: Milliseconds | None = Field(None, alias="for")
    flap: Literal["backbone"] | None = Field(None, description="down `down`, up `up`, "
                                             "`times` times")
    times: int | None = None
    down: Milliseconds | None = None
    up: Milliseconds | None = None
    partition: tuple[tuple[str, ...], ...] | None = Field(
        None, description="sets of switches that cannot reach each other for `for`")
    ramp: RampOf | None = Field(None, description="the backbone's loss, delay or rate, "
                                "`from` to `to` over `over`")
    start: float | None = Field(None, alias="from")
    end: float | None = Field(None, alias="to")
    over: Milliseconds | None = None
    step: Milliseconds | None = Field(None, description="a ramp's longest step (default "
                                      f"{RAMP_STEP_MS:g}ms)")
    hold: Milliseconds | None = Field(None, description="a ramp's last level held this "
                                      "long (default one step) before the planned "
                                      "shaping is restored")
    churn: Percent | None = Field(None, description="this share of the machines restarted "
                                  "one by one over `over`")

    @model_validator(mode="before")
    @classmethod
    def _ramp_values(cls, data: Any) -> Any:
        """A ramp's from and to read as its quantity (a percentage, a duration, a rate)."""
        if not isinstance(data, dict) or data.get("ramp") not in RAMP_PARSERS:
            return data
        parse, read = RAMP_PARSERS[data["ramp"]], dict(data)
        for key in ("from", "to", "start", "end"):
            if key in read and read[key] is not None:
                try:
                    read[key] = float(parse(read[key]))
                except ValueError as error:
                    raise ValueError(f"{key}: {error} (a {data['ramp']} ramp goes from one "
                                     f"{RAMP_UNITS[data['ramp']]} to another)") from None
        return read

    @model_validator(mode="after")
    def _one_fault(self) -> Fault:
        given = [k for k in EVENT_KEYS if self.given(k)]
        if len(given) != 1:
            raise ValueError(
                f"a fault is one of kill, link, loss or delay, or a schedule's event (flap, "
                f"partition, ramp, churn), and this one gives "
                f"{' and '.join(given) if given else 'none'}: write e.g. "
                f"{', '.join(EXAMPLES[k] for k in ('kill', 'link', 'loss', 'delay'))} or "
                f"{EXAMPLES['flap']}, one per entry")
        problems = self._keys_problems(given[0]) + self._span_problems() + \
            self._value_problems()
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def given(self, key: str) -> bool:
        return getattr(self, FIELD_OF.get(key, key)) is not None

    @property
    def event(self) -> str:
        """The key that makes this entry what it is (kill, link, flap...)."""
        return next(k for k in EVENT_KEYS if self.given(k))

    def _keys_problems(self, event: str) -> list[str]:
        needs, takes = NEEDS[event], (*NEEDS[event], *TAKES.get(event, ()))
        extra = [k for k in ("restart_after", "for", "times", "down", "up", "from", "to",
                             "over", "step", "hold") if self.given(k) and k not in takes]
        missing = [k for k in needs if not self.given(k)]
        problems = []
        for key in extra:  # the words failover's faults always had, then the general
            if event == "kill" and key == "for":
                problems.append("a kill lasts until restart_after (or for good without it); "
                                "'for' belongs to link, loss and delay faults: drop 'for'")
            elif key == "restart_after" and event in ("link", "loss", "delay"):
                problems.append("restart_after belongs to a kill; a link, loss or delay fault "
                                "lasts 'for': write for: 3s instead")
            else:
                problems.append(f"{key} does not belong to a {event} (it takes "
                                f"{', '.join(('at', *takes))}): drop '{key}', as in "
                                f"{EXAMPLES[event]}")
        if missing and event in ("link", "loss", "delay"):
            problems.append("a link, loss or delay fault needs 'for' (how long it lasts), "
                            "e.g. for: 2s")
        elif missing:
            problems.append(f"a {event} needs {' and '.join(missing)}: e.g. {EXAMPLES[event]}")
        return problems

    def _span_problems(self) -> list[str]:
        problems = []
        if not 0 <= self.at <= MAX_SCHEDULE_AT_MS:
            problems.append(f"at: {duration_text(self.at)} is outside 0s to a day after the "
                            "load's start: give e.g. at: 400s")
        for key in ("restart_after", "for", "down", "up", "over", "hold"):
            value = getattr(self, FIELD_OF.get(key, key))
            low = MIN_FAULT_MS
            if value is not None and not low <= value <= MAX_FAULT_MS:
                problems.append(
                    f"{key}: {duration_text(value)} is outside "
                    f"{duration_text(low)} to {duration_text(MAX_FAULT_MS)}: "
                    f"shorter than {MIN_FAULT_MS:g}ms is under "
                    "ten probes 10 ms apart (no outage to measure), longer than a minute "
                    "makes one pass minutes long; give a value in that range")
        span = self.lasts_ms
        if span is not None and span > MAX_FAULT_MS and not problems:
            problems.append(f"this {self.event} lasts {duration_text(span)} in all, more "
                            f"than {duration_text(MAX_FAULT_MS)} (a pass would be minutes "
                            "long): give fewer times, or shorter spans")
        return problems

    def _value_problems(self) -> list[str]:
        problems = []
        if self.loss is not None and self.loss <= 0:
            problems.append("a loss burst of 0% is no fault: give e.g. loss: 100%")
        if self.delay is not None and self.delay <= 0:
            problems.append("a delay spike of 0ms is no fault: give e.g. delay: 200ms")
        if self.churn is not None and self.churn <= 0:
            problems.append("a churn of 0% restarts no machine: give e.g. churn: 20%")
        if self.times is not None and not 2 <= self.times <= MAX_FLAP_TIMES:
            problems.append(f"times: {self.times} is outside 2 to {MAX_FLAP_TIMES}: a flap "
                            "goes down and up again at least twice (once is a link fault, "
                            "{at: 5s, link: backbone, for: 1s})")
        if self.ramp is not None and self.start is not None and self.start == self.end:
            problems.append(f"a ramp from {self.value_text(self.start)} to the same value "
                            "changes nothing: give two different values, or a fault that "
                            "holds one (e.g. {at: 5s, delay: 200ms, for: 2s})")
        if self.step is not None and not MIN_RAMP_STEP_MS <= self.step <= (self.over or 0):
            problems.append(f"step: {duration_text(self.step)} is outside "
                            f"{MIN_RAMP_STEP_MS:g}ms to the ramp's `over`: give a step "
                            f"that divides the ramp into levels (default {RAMP_STEP_MS:g}ms)")
        problems += self._partition_problems()
        return problems

    def _partition_problems(self) -> list[str]:
        if self.partition is None:
            return []
        sets = self.partition
        named = [name for group in sets for name in group]
        twice = sorted({name for name in named if named.count(name) > 1})
        if len(sets) < 2 or any(not group for group in sets):
            return ["a partition is at least two non-empty sets of switches, e.g. "
                    "partition: [[switch1], [switch2, switch3]]"]
        if twice:
            return [f"{', '.join(twice)} is in more than one set of the partition: a switch "
                    "is on one side"]
        return []

    def value_text(self, value: float) -> str:
        """A ramp's value as written: '20%', '200ms', '10mbit'."""
        if self.ramp == "rate":
            return format_rate(int(value))
        return f"{value:g}%" if self.ramp == "loss" else duration_text(value)

    @field_serializer("at", "restart_after", "delay", "duration", "down", "up", "over",
                      "step", "hold")
    def _time_text(self, milliseconds: float | None) -> str | None:
        return duration_text(milliseconds) if milliseconds is not None else None

    @field_serializer("start", "end")
    def _ramp_text(self, value: float | None) -> str | None:
        return self.value_text(value) if value is not None else None

    @property
    def kind(self) -> str:
        """Its name in results: failover's kinds, and the schedule's events'."""
        if self.kill is not None:
            what = ("machines" if isinstance(self.kill, MachineCount) else
                    self.kill if self.kill in (CONTROL_PLANE, SERVER) else "switch")
            return f"{what}-{'restart' if self.restart_after is not None else 'kill'}"
        if self.link is not None:
            return "backbone-down"
        if self.flap is not None:
            return "backbone-flap"
        if self.partition is not None:
            return "partition"
        if self.ramp is not None:
            return f"{self.ramp}-ramp"
        if self.churn is not None:
            return "churn"
        return "loss-burst" if self.loss is not None else "delay-spike"

    @property
    def scheduled_only(self) -> bool:
        """An event only a schedule runs (failover injects kills of a switch or the
        control plane, link, loss and delay faults)."""
        return self.event in ("flap", "partition", "ramp", "churn") or (
            self.kill is not None and (isinstance(self.kill, MachineCount)
                                       or self.kill == SERVER))

    @property
    def lasts_ms(self) -> float | None:
        """How long the fault holds (None: a kill for good)."""
        if self.kill is not None:
            return self.restart_after
        if self.flap is not None:
            times, down, up = self.times or 0, self.down or 0.0, self.up or 0.0
            return times * down + max(0, times - 1) * up
        if self.ramp is not None:
            return (self.over or 0.0) + self.ramp_hold_ms
        if self.churn is not None:
            return self.over
        return self.duration

    @property
    def ramp_hold_ms(self) -> float:
        """How long a ramp holds its last level: `hold`, else one step."""
        return self.hold if self.hold is not None else (self.over or 0.0) / self.ramp_levels

    @property
    def ramp_levels(self) -> int:
        """The steps a ramp takes from `from` to `to`: each at most `step` long."""
        return max(1, math.ceil((self.over or 0.0) / (self.step or RAMP_STEP_MS) - 1e-9))

    def describe(self) -> str:
        """'switch2 killed, started again after 3s', 'backbone down for 3s', ..."""
        lasts = duration_text(self.lasts_ms) if self.lasts_ms is not None else ""
        if self.kill is not None:
            return (f"{self.kill} killed" + (f", started again after {lasts}" if lasts
                                             else " for good"))
        if self.link is not None:
            return f"{self.link} down for {lasts}"
        if self.flap is not None:
            return (f"{self.flap} flapping {self.times} times (down "
                    f"{duration_text(self.down or 0)}, up {duration_text(self.up or 0)})")
        if self.partition is not None:
            sides = " | ".join(", ".join(group) for group in self.partition)
            return f"switches partitioned ({sides}) for {lasts}"
        if self.ramp is not None:
            return (f"backbone {self.ramp} from {self.value_text(self.start or 0)} to "
                    f"{self.value_text(self.end or 0)} over {duration_text(self.over or 0)}"
                    + f", held {duration_text(self.ramp_hold_ms)}")
        if self.churn is not None:
            return f"{self.churn:g}% of the machines restarted over {lasts}"
        if self.loss is not None:
            return f"{self.loss:g}% loss on the backbone for {lasts}"
        return f"backbone delay +{duration_text(self.delay or 0)} for {lasts}"
