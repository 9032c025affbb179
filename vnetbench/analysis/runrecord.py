"""run.json as a typed record: its schema (versioned), reading (older formats
upgraded, a damaged or foreign file refused by name) and writing (whole or not at
all, vnetbench/files.py). The one owner of the file's name and format.

Every kind of results directory (a single run, a matrix, a sweep, a comparison, an
A/B, a capacity search, a method) has one run.json with the same keys:
`format_version`, `kind`, `started`, `ended`, `status`, the machine/engine/image
facts, `overlays` (name -> version and data path) and what the kind adds (a single
run: run_id, scenarios, address block, networks, topology, links, timings; a
matrix: its cells, their timings and the stacks cells shared; an A/B: its arms,
schedule and verdicts).

A record writes the keys it was given or has changed since, and no others, so a
file written, read and written again keeps its keys; keys of other versions are
kept as they are. Keys are written in the order declared here (a single run's as
its writers set them; JSON's objects have no order a reader may depend on).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, NotRequired

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    ValidationError,
    model_serializer,
    with_config,
)
from typing_extensions import TypedDict

from vnetbench.errors import UserError
from vnetbench.files import read_kept, write_text_atomic

if TYPE_CHECKING:
    from vnetbench.model.topology import Topology
    from vnetbench.overlays import Overlay

RUN_FILE = "run.json"
# what wrote the directory: `run` (also one `up` left running), and `results` for an
# older run.json without the key
RecordKind = Literal["run", "matrix", "ab", "capacity", "compare", "method", "sweep", "results"]
FORMAT_VERSION = 2  # 2: `overlays` in every kind (1: a single run had `overlay`)

# run.json `timings`: each stack's seconds: bring-up, what join spends around each
# release (programs restarted between passes, waits for a quiet host), measurement,
# teardown
TIMING_PARTS = ("bring_up_s", "restart_s", "measure_s", "teardown_s")


# The parts of run.json its readers (report, compare, history, export, ab) index into,
# typed so that a string where a mapping or number was written (`images.tools: x`,
# `raw_veth_mbit: n/a`) is refused by read_record, naming the key, instead of raising
# deep inside a report. Other keys of each are kept as they are.
KEEP = ConfigDict(extra="allow")


@with_config(KEEP)
class ImageFacts(TypedDict):
    name: NotRequired[str | None]
    id: NotRequired[str | None]


@with_config(KEEP)
class Bracket(TypedDict):
    raw_veth_mbit: NotRequired[float]
    raw_veth_passes: NotRequired[list[float]]
    at: NotRequired[str]


@with_config(KEEP)
class Calibration(TypedDict):
    """A matrix's first cell: this machine's limit (runs/matrix.py's machine_limit)."""

    raw_veth_mbit: NotRequired[float]
    raw_veth_passes: NotRequired[list[float]]
    seconds: NotRequired[float | None]
    brackets: NotRequired[list[Bracket]]
    moved_percent: NotRequired[float]
    error: NotRequired[str]


@with_config(KEEP)
class Timing(TypedDict):
    """One stack's (or a matrix cell's) seconds, TIMING_PARTS."""

    bring_up_s: NotRequired[float]
    restart_s: NotRequired[float]
    measure_s: NotRequired[float]
    teardown_s: NotRequired[float]
    cells: NotRequired[dict[str, Any]]


@with_config(KEEP)
class Arm(TypedDict):
    spec: NotRequired[list[str]]
    overlay: NotRequired[str]


@with_config(KEEP)
class Confirm(TypedDict):
    looks: NotRequired[list[int]]


@with_config(KEEP)
class OutsideLoad(TypedDict):
    passes: int
    marked: int


def shaped(shape: type) -> AfterValidator:
    """A check that a mapping has `shape`'s types, the mapping itself kept as written
    (a writer's dict stays a dict; the shape is what a reader may rely on)."""
    adapter: TypeAdapter[Any] = TypeAdapter(shape)

    def check(value: dict[str, Any]) -> dict[str, Any]:
        try:
            adapter.validate_python(value)
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise ValueError(f"{where}: {first['msg'].lower()}" if where
                             else first["msg"].lower()) from None
        return value
    return AfterValidator(check)


ImageEntry = Annotated[dict[str, Any], shaped(ImageFacts)]
CalibrationEntry = Annotated[dict[str, Any], shaped(Calibration)]
TimingEntry = Annotated[dict[str, Any], shaped(Timing)]
ArmEntry = Annotated[dict[str, Any], shaped(Arm)]
ConfirmEntry = Annotated[dict[str, Any], shaped(Confirm)]
LoadEntry = Annotated[dict[str, Any], shaped(OutsideLoad)]


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class Kept(BaseModel):
    """A part of run.json: unknown keys kept, and only the keys given or changed
    written (a default nobody set is not a key of the file)."""

    model_config = ConfigDict(extra="allow")

    @model_serializer(mode="wrap")
    def _given_keys(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        fields = type(self).model_fields
        return {key: value for key, value in data.items()
                if key not in fields or key in self.model_fields_set
                or getattr(self, key) != fields[key].get_default(call_default_factory=True)}


class Links(Kept):
    """A single run's links: the declared profiles, the shaping the kernel reported per
    stack (shaping.apply.read_back), and the per-pass checks of it."""

    declared: dict[str, dict[str, Any]] = Field(default_factory=dict)
    applied: dict[str, Any] = Field(default_factory=dict)
    checks: dict[str, list[Any]] = Field(default_factory=dict)


class SharedStack(Kept):
    """A stack a matrix's cells of one shape measured on one after another: its
    bring-up, restarts and teardown counted once for all of them (each cell's own
    measurement is its `cell_timings`'), in the run directory `run` under runs/."""

    run: str
    cells: list[str]
    bring_up_s: float = 0.0
    restart_s: float = 0.0
    measure_s: float = 0.0  # its cells' together
    teardown_s: float = 0.0


class RunRecord(Kept):
    """run.json: what ran, where, with what, and how it ended."""

    format_version: int | None = Field(None, ge=1)
    kind: RecordKind | None = None
    started: str | None = None
    ended: str | None = None
    status: str | None = None
    machine: dict[str, Any] = Field(default_factory=dict)
    engine: dict[str, Any] = Field(default_factory=dict)
    images: dict[str, ImageEntry] = Field(default_factory=dict)
    overlays: dict[str, dict[str, Any]] = Field(default_factory=dict)
    # a single run (also one `up` left running)
    run_id: str | None = None
    scenarios: list[str] | None = None
    address_block: str | None = None
    networks: dict[str, dict[str, str]] | None = None
    topology: dict[str, Any] | None = None
    links: Links = Field(default_factory=Links)
    # a run's steps (name -> settings), a method's (labels), a capacity search's
    steps: dict[str, Any] | list[Any] | None = None
    address_blocks_refused: list[str] | None = None
    hosts: dict[str, Any] = Field(default_factory=dict)
    timings: list[TimingEntry] = Field(default_factory=list)
    # a matrix
    quick: bool | None = None
    cells: dict[str, str] = Field(default_factory=dict)
    calibration: CalibrationEntry = Field(default_factory=dict)
    cell_timings: dict[str, TimingEntry] = Field(default_factory=dict)
    shared_stacks: list[SharedStack] = Field(default_factory=list)
    # one scenario's kinds (ab, sweep, capacity)
    scenario: str | None = None
    # an A/B
    rounds: int | None = None
    aa: bool | None = None
    min_effect: float | None = None
    judge_all: bool | None = None
    confirm: ConfirmEntry | None = None
    order: dict[str, Any] | None = None  # the rounds' order: alternate or random, its seed
    arms: dict[str, ArmEntry] = Field(default_factory=dict)
    schedule: list[dict[str, Any]] = Field(default_factory=list)
    outside_load: dict[str, LoadEntry] = Field(default_factory=dict)
    verdicts: dict[str, int] = Field(default_factory=dict)
    # a sweep
    parameter: str | None = None
    values: list[Any] | None = None
    # the --slo targets a run or matrix was given (slo.Target.text), for its report
    targets: list[str] | None = None
    # a capacity search
    dimension: str | None = None
    slo: list[str] | None = None
    largest: Any = None
    # a method
    method: str | None = None
    reference: str | None = None
    short: bool | None = None

    def as_json(self) -> dict[str, Any]:
        """The file's content: the keys given or changed, in JSON's types."""
        return self.model_dump(mode="json")

    def save(self, directory: Path) -> None:
        write_text_atomic(directory / RUN_FILE,
                          json.dumps(self.as_json(), indent=2, default=str) + "\n")

    def recorded_topology(self, directory: Path) -> Topology | None:
        """The topology the record holds (a run `up` left running); None without one."""
        from vnetbench.model.topology import parse_topology

        if self.topology is None:
            return None
        return parse_topology(self.topology, str(directory / RUN_FILE))

    def record_shaping(self, directory: Path, topology: Topology,
                       applied: dict[str, Any]) -> None:
        """Saved once `shape` changed a running topology: the topology now in force and
        the shaping the kernel reports."""
        self.topology = topology.model_dump(mode="json")
        self.links.applied = {"shape": applied}
        self.save(directory)


def overlay_facts(overlays: Iterable[Overlay]) -> dict[str, dict[str, str]]:
    return {o.name: {"data_path": o.data_path, "version": o.version()} for o in overlays}


def new_record(kind: RecordKind, overlays: Iterable[Overlay], **fields: Any) -> RunRecord:
    """run.json's common part for any kind of directory, plus the kind's own fields."""
    from vnetbench.analysis.metadata import host_facts
    from vnetbench.runtime.images import TOOLS_IMAGE

    return RunRecord.model_validate({
        "format_version": FORMAT_VERSION, "kind": kind, "started": now_iso(),
        "ended": None, "status": "running", **host_facts(TOOLS_IMAGE),
        "overlays": overlay_facts(overlays), **fields})


def upgrade(data: dict[str, Any]) -> dict[str, Any]:
    """A run.json of an older format in today's schema."""
    if "overlays" not in data and isinstance(data.get("overlay"), dict):
        overlay = dict(data["overlay"])
        data = {**data, "overlays": {overlay.pop("name", "?"): overlay}}
    data.setdefault("kind", "run" if "run_id" in data else "results")
    return data


def read_record(directory: Path) -> RunRecord:
    """run.json of a directory (an empty record when there is none); a damaged or
    foreign one is a UserError naming it, not a traceback deep in a report."""
    path = directory / RUN_FILE
    if not path.exists():
        return RunRecord()
    try:
        data = json.loads(read_kept(path))
    except (OSError, ValueError) as error:
        raise UserError(f"{path} cannot be read ({error}). It is written whole or not at all, "
                        "so something else changed it: restore it or remove it.") from None
    if not isinstance(data, dict):
        raise UserError(f"{path} is not a run.json (not a JSON object). Give a results "
                        "directory vnetbench wrote, or restore the file.")
    version = data.get("format_version")
    if isinstance(version, int) and not isinstance(version, bool) and version > FORMAT_VERSION:
        raise UserError(f"{path} is of format {version}, written by a newer vnetbench (this "
                        f"one reads formats up to {FORMAT_VERSION}): read it with that "
                        "vnetbench, or upgrade this one.")
    try:
        return RunRecord.model_validate(upgrade(data))
    except ValidationError as error:
        wrong = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: "
                          f"{e['msg'].lower().removeprefix('value error, ')}"
                          for e in error.errors()[:3])
        raise UserError(f"{path} is not a run.json vnetbench wrote ({wrong}). Something else "
                        "changed it, or it belongs to another tool: restore it from a copy, "
                        "or remove it (the results beside it are read without it).") from None


@contextmanager
def recorded(directory: Path, record: RunRecord) -> Iterator[RunRecord]:
    """Save run.json now and again at the end with how it ended (completed,
    interrupted, failed: why), whatever happens in between."""
    record.save(directory)
    try:
        yield record
        record.status = "completed"
    except KeyboardInterrupt as interrupt:
        record.status = f"interrupted ({str(interrupt) or 'Ctrl-C'})"
        raise
    except Exception as error:
        record.status = f"failed: {error}"
        raise
    finally:
        record.ended = now_iso()
        record.save(directory)
