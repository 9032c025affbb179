"""The open-loop room's schedule: when each machine sends each request, and which
reply it asks for, fixed on the host before the load and handed to the machine's
generator (`vnetbench-room open` in the tools image) in one argument.

Arrivals are "even" (every 1/rate s, machine i of N shifted by i/N of that gap, as
the closed loop's phases are) or "poisson": as many requests as "even" plans, at
instants drawn uniformly over the load, sorted. That is a Poisson process given
its count (its gaps exponential with mean 1/rate, as n grows), so both arrivals
offer the same number of requests and a plan's size is known before it is drawn.
The draw is seeded by the machine's name and the pass: a pass is reproducible.

The encoding: one token per request, `DELTA.SIZE` joined by commas, DELTA the
microseconds since the previous request (the first: since the room's instant) and
SIZE the reply's index into the sizes, both in base 36. Linux refuses an argument
longer than MAX_ARG_STRLEN (32 pages: 131,072 bytes with its NUL). A token is at
most len(DELTA) + 3 bytes, and with deltas summing to at most the load's span S
over n requests, the digits sum to at most n * (log36(S/n + 1) + 1) (log is concave):
at 5/s for 60 s that is 300 tokens of 7 bytes (2.1 kB), bounded by 7.4 bytes a
request: 128 KiB hold about 50 minutes at 5/s. `plan_fits` checks this bound
before anything starts; `encode` checks the real length.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from vnetbench.errors import UserError

Arrivals = Literal["even", "poisson"]
MAX_ARGUMENT_BYTES = 32 * 4096 - 1  # Linux's MAX_ARG_STRLEN, less the string's NUL
DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"
TOKEN_OVERHEAD = 3  # "." + one size digit (at most 36 sizes) + ","


@dataclass(frozen=True)
class MachineSchedule:
    """One machine's requests: microseconds after the room's instant, ascending, and
    each one's reply size (an index into the room's sizes)."""

    offsets_us: tuple[int, ...]
    size_indexes: tuple[int, ...]

    def __len__(self) -> int:
        return len(self.offsets_us)

    @property
    def last_s(self) -> float:
        return self.offsets_us[-1] / 1e6 if self.offsets_us else 0.0


def requests_per_machine(rate: float, seconds: float) -> int:
    """Requests one machine plans in `seconds` at `rate` (one at 0, then every 1/rate)."""
    return max(0, math.ceil(rate * seconds - 1e-9))


def machine_schedule(index: int, machines: int, rate: float, seconds: float, sizes: int,
                     arrivals: Arrivals, seed: str) -> MachineSchedule:
    """The schedule of machine `index` (0-based) of a room of `machines`; sizes cycle."""
    count = requests_per_machine(rate, seconds)
    if arrivals == "even":
        gap = 1 / rate
        phase = index * gap / machines
        times = [phase + k * gap for k in range(count)]
    else:
        draw = random.Random(seed)  # a str seed hashes the same in every process
        times = sorted(draw.uniform(0, seconds) for _ in range(count))
    offsets = tuple(round(t * 1e6) for t in times)
    return MachineSchedule(offsets, tuple(k % sizes for k in range(count)))


def room_schedules(machines: Sequence[str], rate: float, seconds: float, sizes: int,
                   arrivals: Arrivals, pass_no: int) -> dict[str, MachineSchedule]:
    """Every machine's schedule for one pass, seeded by its name and the pass."""
    return {name: machine_schedule(index, len(machines), rate, seconds, sizes, arrivals,
                                   f"{name}/pass{pass_no}")
            for index, name in enumerate(machines)}


def base36(value: int) -> str:
    digits = ""
    while True:
        value, digit = divmod(value, 36)
        digits = DIGITS[digit] + digits
        if value == 0:
            return digits


def within(schedule: MachineSchedule, from_s: float, until_s: float) -> MachineSchedule:
    """The requests of a schedule due in [from_s, until_s) after the room's instant: a
    machine's share while it is up, when a schedule of faults kills it or starts it
    again (a machine switched off asks nothing)."""
    kept = [(offset, size) for offset, size in zip(schedule.offsets_us, schedule.size_indexes,
                                                   strict=True)
            if from_s * 1e6 <= offset < until_s * 1e6]
    return MachineSchedule(tuple(o for o, _ in kept), tuple(s for _, s in kept))


def encode(schedule: MachineSchedule) -> str:
    """The schedule as one argument (see the module's docstring); UserError if too long."""
    tokens, previous = [], 0
    for offset, size in zip(schedule.offsets_us, schedule.size_indexes, strict=True):
        tokens.append(f"{base36(offset - previous)}.{base36(size)}")
        previous = offset
    text = ",".join(tokens)
    if len(text.encode()) > MAX_ARGUMENT_BYTES:
        raise UserError(too_long(len(schedule), len(text.encode())))
    return text


def decode(text: str) -> MachineSchedule:
    """The inverse of `encode` (the tools image's script has its own copy)."""
    offsets, sizes, at = [], [], 0
    for token in filter(None, text.split(",")):
        delta, size = token.split(".")
        at += int(delta, 36)
        offsets.append(at)
        sizes.append(int(size, 36))
    return MachineSchedule(tuple(offsets), tuple(sizes))


def encoded_bound(requests: int, span_s: float) -> int:
    """The most bytes `encode` can give for `requests` whose offsets lie within `span_s`
    (the module's docstring says why)."""
    if requests == 0:
        return 0
    # digits(d) <= log36(d + 1) + 1 for every d >= 0, and log is concave
    mean = span_s * 1e6 / requests + 1
    return math.floor(requests * (math.log(mean, 36) + 1 + TOKEN_OVERHEAD))


def plan_fits(rate: float, seconds: float) -> None:
    """Refuse, before anything starts, a plan whose schedule could not be one argument."""
    requests = requests_per_machine(rate, seconds)
    bound = encoded_bound(requests, seconds + 1 / rate if rate > 0 else seconds)
    if bound > MAX_ARGUMENT_BYTES:
        raise UserError(too_long(requests, bound))


def too_long(requests: int, size: int) -> str:
    return (f"The room's open loop would hand each machine {requests} requests, a schedule "
            f"of up to {size:,} bytes: more than the {MAX_ARGUMENT_BYTES + 1:,} bytes Linux "
            "allows one argument of a program (MAX_ARG_STRLEN). Give fewer requests per "
            "machine (a lower room_rate or fewer seconds), or room_loop: closed.")
