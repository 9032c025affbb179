"""A room's workload, declared as data (issue #37): named phases in order, each with
a length, a mix of requests every machine asks (reply size, rate per machine,
kept or new connections) and "at once" events (every machine fetches one object
at the same instant), each over HTTP or HTTPS, a kind's requests downloads or
uploads. Pure model and loading; scenarios/room/workload_schedule.py turns
it into each machine's schedule, scenarios/room/workload_figures.py reads figures per
phase back.

A workload comes from a YAML file (`--workload FILE`), a topology's `workload:`
section, or a profile shipped in vnetbench/data/workloads/ by name (`contest`).
Bad input is reported as a topology's is: every problem at once, each with its
place in the file and what to do, as one UserError.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, ValidationError, field_validator, model_validator

from vnetbench.core.model import NAME_PATTERN, Bytes, Model, Name, read_yaml
from vnetbench.core.units import format_bytes
from vnetbench.core.yamlfile import load_yaml, not_a_regular_file
from vnetbench.declared.room import MAX_ROOM_REPLY_BYTES
from vnetbench.errors import UserError

PROFILES = Path(__file__).resolve().parents[1] / "data" / "workloads"
MAX_PHASES = 20
MAX_KINDS = 10  # per phase
MAX_EVENTS = 10  # per phase
# the server's files, one per size; a schedule's token holds a size's index in one
# base-36 digit (scenarios/room/open_loop.py TOKEN_OVERHEAD)
MAX_SIZES = 36
MAX_WORKLOAD_S = 24 * 3600  # a contest is five hours; a day bounds a typo
MAX_RATE = 10_000.0  # requests per second per machine, as room_rate
# an upload's body: nginx's client_max_body_size, and each machine holds it in memory
MAX_UPLOAD_BYTES = MAX_ROOM_REPLY_BYTES
Scheme = Literal["http", "https"]
SCHEME: Any = Field("http", description="http, or https: TLS 1.3, a new connection resuming "
                    "the machine's latest session as a browser does")


def reply_size(size: int | None) -> int | None:
    """None for an upload's kind (no reply size), as given again by a dump of the model."""
    if size is not None and size > MAX_ROOM_REPLY_BYTES:
        raise ValueError(f"{format_bytes(size)} is more than the "
                         f"{format_bytes(MAX_ROOM_REPLY_BYTES)} the room's server holds in "
                         f"memory per reply: give at most {format_bytes(MAX_ROOM_REPLY_BYTES)}")
    return size


def upload_size(size: int | None) -> int | None:
    if size is not None and size > MAX_UPLOAD_BYTES:
        raise ValueError(f"an upload of {format_bytes(size)} is more than the "
                         f"{format_bytes(MAX_UPLOAD_BYTES)} the room's server accepts (and "
                         f"each machine holds in memory): give at most "
                         f"{format_bytes(MAX_UPLOAD_BYTES)}")
    return size


def target(scheme: Scheme, size: int | None, upload: int | None) -> str:
    """What the room's generator asks, as its SIZES token: "[s][u]BYTES" (s: HTTPS, u:
    an upload of BYTES; else a reply of BYTES). A plain download's is its size."""
    return (f"{'s' if scheme == 'https' else ''}{'u' if upload is not None else ''}"
            f"{upload if upload is not None else size}")


ReplySize = Annotated[Bytes, Field(description="the reply's size: bytes, or e.g. 4KiB")]
UploadSize = Annotated[Bytes, Field(description="a POST's body: bytes, or e.g. 4KiB; its "
                                    "reply is a few bytes (the length the server read)")]


class RequestKind(Model):
    """One kind of request in a phase's mix: each machine asks for `size` bytes, or
    uploads `upload` bytes, at `rate` per second, over `scheme`, on kept or new
    connections (None: the room's setting)."""

    name: Name
    size: ReplySize | None = None
    upload: UploadSize | None = None
    rate: float = Field(description="requests per second of each machine, e.g. 0.5")
    connection: Literal["keep", "new"] | None = None
    scheme: Scheme = SCHEME

    _size_bounded = field_validator("size")(reply_size)
    _upload_bounded = field_validator("upload")(upload_size)

    @model_validator(mode="after")
    def _one_of_size_and_upload(self) -> RequestKind:
        if (self.size is None) == (self.upload is None):
            given = "both" if self.size is not None else "neither"
            raise ValueError(f"kind {self.name!r} gives {given} of size and upload: give "
                             "size for a download (the reply's bytes, e.g. 20KiB) or upload "
                             "for a POST of that many bytes (e.g. 4KiB, its reply a few "
                             "bytes), one of the two")
        return self

    @property
    def target(self) -> str:
        return target(self.scheme, self.size, self.upload)

    @field_validator("rate")
    @classmethod
    def _rate_in_range(cls, rate: float) -> float:
        if not 0 < rate <= MAX_RATE:
            raise ValueError(f"a rate of {rate:g} requests per second per machine is not "
                             f"above 0 and at most {MAX_RATE:g}: give e.g. 0.5 (one every "
                             "2 s) or 0.0167 (one a minute); a kind that asks nothing is "
                             "left out")
        return rate


class AtOnce(Model):
    """Every machine fetches `size` bytes at one instant, `at_s` into its phase."""

    name: Name
    at_s: float = Field(0.0, ge=0, description="seconds after the phase's start")
    size: ReplySize
    scheme: Scheme = SCHEME

    _size_bounded = field_validator("size")(reply_size)

    @property
    def target(self) -> str:
        return target(self.scheme, self.size, None)


class Phase(Model):
    """A stretch of the workload: its mix runs throughout, its events at their instants."""

    name: Name
    seconds: float = Field(gt=0, le=MAX_WORKLOAD_S, description="the phase's length")
    mix: tuple[RequestKind, ...] = Field((), max_length=MAX_KINDS)
    at_once: tuple[AtOnce, ...] = Field((), max_length=MAX_EVENTS)

    @model_validator(mode="after")
    def _coherent(self) -> Phase:
        problems = [f"at_once {event.name!r} at {event.at_s:g} s is not within the phase's "
                    f"{self.seconds:g} s: give at_s below {self.seconds:g}, or lengthen the "
                    "phase" for event in self.at_once if event.at_s >= self.seconds]
        if not self.mix and not self.at_once:
            problems.append("the phase asks nothing (no mix, no at_once): give it a mix or "
                            "an at_once event, or lengthen its neighbour instead")
        twice = repeated([k.name for k in self.mix])
        if twice:
            problems.append(f"mix: the kinds' names must be unique: {', '.join(twice)} "
                            "repeated (a name labels its requests)")
        if problems:
            raise ValueError("; ".join(problems))
        return self

    @property
    def sizes(self) -> set[int]:
        """The replies' sizes (the server's files; an upload's reply is not one)."""
        return {k.size for k in self.mix if k.size is not None} | {e.size for e in self.at_once}

    @property
    def targets(self) -> set[str]:
        return {k.target for k in self.mix} | {e.target for e in self.at_once}


class Workload(Model):
    """The phases in order, laid end to end from the room's instant."""

    name: Name | None = Field(None, description="the workload's name in results "
                              "(set_room_workload); none: 'unnamed'")
    timeout_s: int | None = Field(
        None, ge=1, le=60, description="a request unanswered this long after its instant "
        "times out, in place of room_timeout_s (whole seconds); none: room_timeout_s")
    # not min_length: pydantic counts the phases that validated, and would add "at
    # least 1 item" to the problems of a workload whose every phase has one
    phases: tuple[Phase, ...] = Field(max_length=MAX_PHASES)

    @model_validator(mode="after")
    def _coherent(self) -> Workload:
        if not self.phases:
            raise ValueError("phases: none given: give at least one {name, seconds, mix, "
                             "at_once}")
        problems = []
        twice = repeated([p.name for p in self.phases])
        if twice:
            problems.append(f"phases: the phases' names must be unique: {', '.join(twice)} "
                            "repeated (each names its figures)")
        twice = repeated([e.name for p in self.phases for e in p.at_once])
        if twice:
            problems.append(f"phases: the at_once events' names must be unique over the "
                            f"workload: {', '.join(twice)} repeated (each names its figures)")
        if self.seconds > MAX_WORKLOAD_S:
            problems.append(f"phases: {self.seconds:g} s in all is more than a day "
                            f"({MAX_WORKLOAD_S} s): shorten the phases")
        if len(self.targets) > MAX_SIZES:
            problems.append(f"phases: {len(self.targets)} different requests (reply sizes and "
                            f"uploads, by scheme) are more than {MAX_SIZES} (a schedule names "
                            "one in a base-36 digit): use fewer sizes")
        if problems:
            raise ValueError("; ".join(problems))
        return self

    @property
    def seconds(self) -> float:
        return sum(p.seconds for p in self.phases)

    @property
    def sizes(self) -> tuple[int, ...]:
        """Every reply size the server must serve, ascending."""
        return tuple(sorted(set().union(*(p.sizes for p in self.phases))))

    @property
    def targets(self) -> tuple[str, ...]:
        """Every request the generator asks (model.workload.target's tokens): the
        plain downloads first, by size (a plain workload's are its sizes), then the
        others by token."""
        every = set().union(*(p.targets for p in self.phases))
        return tuple(sorted(every, key=lambda t: (not t.isdigit(), int(t) if t.isdigit()
                                                  else 0, t)))

    @property
    def https(self) -> bool:
        """Whether any request goes over TLS (the server listens for it)."""
        return any(t.startswith("s") for t in self.targets)


def repeated(names: list[str]) -> list[str]:
    return sorted(name for name, count in Counter(names).items() if count > 1)


def profile_names() -> list[str]:
    return sorted(path.stem for path in PROFILES.glob("*.yml"))


def profile_path(name: str) -> Path:
    """The shipped profile's file; UserError naming the profiles when there is none."""
    path = PROFILES / f"{name}.yml"
    if not path.is_file():
        raise UserError(f"There is no workload profile named {name!r}. Give one of "
                        f"{', '.join(profile_names()) or 'none shipped'}, or a workload "
                        "file's path.")
    return path


def named_profile(value: Any) -> Any:
    """A topology's `workload: contest`: the profile's mapping in its place."""
    if isinstance(value, str):
        path = PROFILES / f"{value}.yml"
        if not re.fullmatch(NAME_PATTERN, value) or not path.is_file():
            raise ValueError(f"no workload profile named {value!r}: give one of "
                             f"{', '.join(profile_names())}, or the workload's phases here")
        return load_yaml(path.read_text(encoding="utf-8"))
    if not isinstance(value, dict | Workload):
        raise ValueError(f"{value!r} is no workload: give a mapping with phases (a list of "
                         "{name, seconds, mix, at_once}), or a shipped profile's name "
                         f"({', '.join(profile_names())})")
    return value


# a topology's `workload:` section: a mapping of phases, or a profile's name
WorkloadSection = Annotated[Workload, BeforeValidator(named_profile)]


def parse_workload(data: Any, source: str) -> Workload:
    """Validate a parsed workload, reporting every problem at once."""
    if not isinstance(data, dict):
        raise UserError(f"{source}: a workload must be a YAML mapping with 'phases', a list "
                        "of {name, seconds, mix, at_once}; see "
                        f"{PROFILES / 'contest.yml'} for an example.")
    try:
        return Workload.model_validate(data)
    except ValidationError as error:
        raise UserError(describe_problems(error, source)) from None


def describe_problems(error: ValidationError, source: str) -> str:
    """Every problem on a line of its own, at its place in the file."""
    lines = [f"  - {'.'.join(str(part) for part in item['loc']) or '(top level)'}: "
             f"{str(item['msg']).removeprefix('Value error, ')}" for item in error.errors()]
    return "\n".join([f"{source} is not a valid workload ({len(lines)} problem(s)):", *lines,
                      "Fix these in the file and run again."])


def load_workload(path: Path) -> Workload:
    """Read and validate a workload file."""
    if not path.is_file():
        fix = f"Give the path of a YAML workload, or a profile's name " \
              f"({', '.join(profile_names())})."
        raise UserError(not_a_regular_file(path, fix) or
                        f"There is no workload file at {path}. {fix}")
    data = read_yaml(path, "a workload file")
    return parse_workload(data, str(path))


def workload_from(argument: str) -> Workload:
    """`--workload`'s value: a shipped profile's name (contest), else a file's path."""
    if "/" not in argument and not argument.endswith((".yml", ".yaml")):
        return load_workload(profile_path(argument))
    return load_workload(Path(argument))
