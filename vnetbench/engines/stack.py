"""A running stack, whatever engine runs it: bring-up and its readiness, deaths,
logs, the start gate and restarts of gated programs, teardown.

Everything a run creates carries the label vnetbench.run=<run id>; teardown
and `vnetbench clean` remove by that label, so they can neither miss a
container of the run nor touch anything that is not vnetbench's. The engine's
own part (how a rendered run comes up and goes, where its gate is) is its
Deployment; everything here goes through the Engine.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from vnetbench.engines.base import (
    Engine,
    EngineError,
    Listed,
    LogStream,
    Removed,
    RenderedRun,
    Source,
)
from vnetbench.engines.usage import MemoryReading, wait_until_quiet
from vnetbench.errors import UserError
from vnetbench.files import write_text_atomic
from vnetbench.runtime import labels
from vnetbench.runtime.labels import run_filter
from vnetbench.terminal.ui import note, waiting

if TYPE_CHECKING:
    from vnetbench.model.topology import Topology


@dataclass(frozen=True)
class Death:
    """A container of the system under test that stopped while the run measured."""

    service: str  # as in the compose file, e.g. router-switch2
    exit_code: int
    finished: datetime
    last_line: str

    def describe(self, during: str) -> str:
        said = f", its log ends: {self.last_line}" if self.last_line else ""
        return (f"{self.service} exited ({self.exit_code}) at "
                f"{self.finished:%H:%M:%S} UTC {during}{said}")


LOG_READERS = 8  # concurrent log reads when saving a stack's logs
HELPER_ROLES = {"ca", "probe", "shaper", "host-shaper", "fabric", "capability-probe",
                "fabric-sweep", "gatekeeper"}
# Health checks: the longest start period a template gives is 90 s (vNet's servers), so
# every container is healthy, unhealthy or past its start period within it, twice over.
BRING_UP_SECONDS = 180


class Stack:
    """One rendered run on an engine (its Deployment says how the engine does it)."""

    def __init__(self, rendered: RenderedRun, engine: Engine, topology: Topology) -> None:
        self.rendered = rendered
        self.engine = engine
        self.deployment = engine.deployment(rendered, topology)
        self.saved_logs: list[Source] = []
        self.gate_releases = 0  # starts of a gated stack's programs released so far
        self.release_overhead_s = 0.0  # join's testbed time: restarts, quiet-host waits
        self.unready: list[str] = []  # agents that never became ready (named at up)
        self.started_at: dict[str, datetime | None] = {}  # container id -> its start

    @property
    def run_id(self) -> str:
        return self.rendered.run_id

    @property
    def release_skew_ms(self) -> float | None:
        """Several hosts: the last release's skew between them."""
        return self.deployment.release_skew_ms

    def container(self, service: str) -> str:
        return f"{self.rendered.project}-{service}"

    def containers(self, role: str | None = None) -> list[Listed]:
        """The run's containers (of one role)."""
        filters = run_filter(self.run_id)
        return self.engine.containers([*filters, labels.role_filter(role)] if role else filters)

    def up(self, timeout_seconds: int = BRING_UP_SECONDS,
           refused: Refused | None = None) -> list[str]:
        """Bring the stack up and wait for it to be ready (servers by their health checks,
        agents by their marks: Stack.settle). Agents that never become
        ready (an overlay that loses joins) do not stop the run when everything else
        is up: they are named (and returned), and the scenarios report what they
        cannot measure. `refused`: the overlay's reading of which starting agents its
        servers refused for good (GivenUp), so they fail at once."""
        began = time.monotonic()  # every container starts after this
        given_up = GivenUp(refused) if refused is not None else None
        with waiting(f"bringing up {self.rendered.project} (readiness)"):
            return self.deployment.up(
                timeout_seconds,
                lambda said: self.accept_unready(said, timeout_seconds, began, given_up))

    def accept_unready(self, said: str, timeout_seconds: int,
                       began: float | None = None, given_up: GivenUp | None = None
                       ) -> list[str]:
        """Once every service is started (`said`: what the engine said of any that was
        not; empty when it said nothing): wait until each container is ready or
        failed, and name the agents that failed, or raise a UserError naming what
        else failed or is still starting."""
        states = self.settle(deadline=time.monotonic() + timeout_seconds, began=began,
                             given_up=given_up)
        if all(state == "ready" for _, state in states.values()) and states:
            return []
        said = said or "not every container became ready"
        failed = judged(states, timeout_seconds, said, self.rendered.directory / "logs")
        reason = said.splitlines()[-1:]
        why = "; ".join(f"{agent} {text}" for agent, text in sorted(
            given_up.reasons.items())) if given_up is not None else ""
        if failed:
            note(f"{len(failed)} agent container(s) did not become ready "
                 f"({', '.join(failed)}; the engine said: {' '.join(reason)}"
                 f"{'; ' + why if why else ''}); the run goes "
                 "on and the scenarios report what they cannot measure", style="yellow")
        return failed

    def settle(self, deadline: float, began: float | None = None,
               given_up: GivenUp | None = None) -> dict[str, tuple[str | None, str]]:
        """Container -> (role, 'ready', 'failed' or 'starting'), once none is starting
        or at the deadline (monotonic seconds). No container can be past its health
        check's start period before the shortest one has passed since the bring-up
        `began` (every container started after it), so none is inspected before; nor
        ever without a start period (an engine without start_interval: its checks
        end in healthy or unhealthy on their own)."""
        spec = compose_spec(self.rendered.compose_file)
        period, marked = shortest_start_period(spec), marked_services(spec)
        start = began if began is not None else time.monotonic()
        while True:
            now = time.monotonic()
            may_be_over = period > 0 and now >= start + period
            listed = self.containers()
            unmarked = self.unmarked(marked)  # after the listing: a mark seen is of a start listed
            states = {c.name: (c.labels.get(labels.ROLE), self.marked_state(
                c, self.service_of(c.name) in unmarked, now >= start + MARK_WITHIN_S)
                if self.service_of(c.name) in marked else self.state_of(c, may_be_over))
                for c in listed}
            if given_up is not None:
                states = self.without_given_up(states, given_up)
            if all(state != "starting" for _, state in states.values()) or (
                    time.monotonic() >= deadline):
                return states
            starting = {self.service_of(name) for name, (_, state) in states.items()
                        if state == "starting"}
            if starting <= unmarked:  # each waits for its mark alone: watched, not slept on
                self.wait_for_marks_of(marked, starting, SETTLE_POLL_SECONDS)
            else:
                time.sleep(SETTLE_POLL_SECONDS)

    def without_given_up(self, states: dict[str, tuple[str | None, str]],
                         given_up: GivenUp) -> dict[str, tuple[str | None, str]]:
        """`states` with the starting agents their servers refused for good failed."""
        starting = {self.service_of(name) for name, (role, state) in states.items()
                    if state == "starting" and role == "agent"}
        gone = given_up.of(starting)
        return {name: (role, "failed" if self.service_of(name) in gone else state)
                for name, (role, state) in states.items()}

    def wait_for_marks_of(self, marked: dict[str, str], services: set[str],
                          seconds: float) -> None:
        """Until each of `services` (of `marked`: service -> kind) has its first mark, at
        most `seconds`: the marks directory looked at every 50 ms (no engine call), so
        the listing that confirms them comes as the last one appears, not up to a poll
        of SETTLE_POLL_SECONDS later (a bring-up's last step, and join's per pass)."""
        deadline = time.monotonic() + seconds
        kinds: dict[str, list[str]] = defaultdict(list)
        for service in sorted(services):
            kinds[marked[service]].append(service)
        for kind, named in kinds.items():
            self.deployment.wait_for_marks(named, kind, 1,
                                           max(0.0, deadline - time.monotonic()))

    def unmarked(self, marked: dict[str, str]) -> set[str]:
        """The services of `marked` (service -> kind) whose first mark is not there yet:
        one look at the marks directory (on each node), no engine call."""
        kinds: dict[str, list[str]] = defaultdict(list)
        for service, kind in marked.items():
            kinds[kind].append(service)
        return {service for kind, services in kinds.items()
                for service in self.deployment.wait_for_marks(services, kind, 1, 0)}

    def marked_state(self, container: Listed, unmarked: bool, may_be_late: bool) -> str:
        """A container without a health check, ready once it runs and its mark is there
        (the wrapper at the gate, or the set-up done); 'failed' when it stopped, or still
        has no mark MARK_WITHIN_S after its start; else 'starting'."""
        if container.state == "restarting":
            return "starting"
        if container.state != "running":
            return "failed"
        if not unmarked:
            return "ready"
        return "failed" if may_be_late and self.mark_late(container) else "starting"

    def mark_late(self, container: Listed) -> bool:
        """Has the container run MARK_WITHIN_S without its mark (or gone)? Its start is
        inspected once per container (not on every look of a wait)."""
        if container.id not in self.started_at:
            self.started_at[container.id] = self.engine.health_started(container)[0]
        started = self.started_at[container.id]
        return started is None or (datetime.now(UTC) - started).total_seconds() > MARK_WITHIN_S

    def state_of(self, container: Listed, may_be_over: bool = True) -> str:
        """'ready' (running, healthy or without a check), 'failed' (exited, unhealthy,
        or still unchecked after its start period: with start_interval it is next
        checked an hour later), or 'starting'. `may_be_over` False: its start
        period cannot have passed yet (no inspection)."""
        running = container.state == "running"
        if running and container.health in (None, "healthy"):
            return "ready"
        # the engine has tried to start them all: "created" means it failed
        if container.state == "restarting" or (
                running and container.health == "starting"
                and not (may_be_over and self.start_period_over(container))):
            return "starting"
        return "failed"

    def start_period_over(self, container: Listed) -> bool:
        """Has the container's health-check start period passed since it started?"""
        started, period_s = self.engine.health_started(container)
        if not started or not period_s:
            return started is None  # gone: it will not become ready
        return (datetime.now(UTC) - started).total_seconds() > period_s

    def deaths(self) -> list[Death]:
        """The system-under-test containers of this stack that have stopped, oldest first."""
        found = []
        stopped = [c for c in self.containers() if c.state in ("exited", "dead")
                   and c.labels.get(labels.ROLE) not in HELPER_ROLES]
        for listed in stopped:  # one listing per pass; only stopped ones inspected
            ended = self.engine.stopped(listed)
            if ended is not None:
                found.append(Death(self.service_of(ended.name), ended.exit_code,
                                   ended.finished or datetime.now(UTC), ended.last_line))
        return sorted(found, key=lambda death: death.finished)

    def logs(self, role: str | None = None, since: datetime | None = None,
             quick: bool = False, at_once: bool = False) -> list[Source]:
        """Every container's log (with the engine's timestamps), optionally of one role;
        `quick`: each read bounded like teardown's calls; `at_once`: whole logs read in
        one call where the engine can (Engine.project_logs), the rest one by one."""
        containers = self.containers(role)
        whole = (self.engine.project_logs(self.rendered.project, containers)
                 if at_once and since is None else {})

        def read(container: Listed) -> Source | None:
            text = whole.get(container.name)
            if text is None:
                after = self.deployment.on_node_clock(since, container.where) if since else None
                try:  # a probe started with --rm may be gone already
                    text = self.engine.logs(container.name, since=after, timestamps=True,
                                            quick=quick)
                except EngineError:
                    return None
            return Source(container.name, container.labels.get(labels.ROLE, ""),
                          container.labels.get(labels.NODE, container.name),
                          self.deployment.on_manager_clock(text, container.where))

        with ThreadPoolExecutor(LOG_READERS) as readers:  # 200 containers: 200 calls
            found = readers.map(read, containers)
            sources = [source for source in found if source is not None]
        return sources

    @contextmanager
    def log_stream(self, role: str, since: datetime | None = None) -> Iterator[LogStream]:
        """The logs of one role's containers as they come (since a time)."""
        stream = self.engine.follow_logs(self.rendered.project, self.containers(role), since,
                                         self.deployment)
        try:
            yield stream
        finally:
            stream.close()

    def cpu_by_role(self) -> dict[str, dict[str, float]]:
        """CPU seconds used so far by each running container of the run (by id), per role
        label: kept apart so that a container that restarts or ends shows (role_percent)."""
        return self.cpu_readings(set())[0]

    def cpu_readings(self, names: set[str]) -> tuple[dict[str, dict[str, float]],
                                                     dict[str, float]]:
        """cpu_by_role and cpu_by_container(names) from one listing, each container's
        counter read once: a pass's readings before and after its load were two
        listings (CLI calls) each, one right after the other."""
        readings: dict[str, dict[str, float]] = defaultdict(dict)
        named: dict[str, float] = {}
        for container in self.containers():
            used = self.engine.cpu_seconds(container) if container.state == "running" else None
            if used is not None:
                readings[container.labels.get(labels.ROLE, "other")][container.id] = used
                if container.name in names:
                    named[container.name] = used
        return dict(readings), named

    def memory_by_role(self) -> dict[str, list[MemoryReading]]:
        """Memory now of each running container of the run, per role label (the raw
        readings: measure.memory.by_role aggregates them, sum, mean and max peak)."""
        readings: dict[str, list[MemoryReading]] = defaultdict(list)
        for container in self.containers():
            found = self.engine.memory(container) if container.state == "running" else None
            if found is not None:
                readings[container.labels.get(labels.ROLE, "other")].append(found)
        return dict(readings)

    def cpu_by_container(self, names: set[str]) -> dict[str, float]:
        """CPU seconds used so far by the named running containers of the run."""
        return self.cpu_readings(names)[1]

    def placement_settings(self) -> dict[str, str]:
        return self.deployment.placement_settings()

    def file_changed(self, path: Path) -> None:
        self.deployment.file_changed(path)

    def where_record(self) -> dict[str, object]:
        return self.deployment.where_record()

    # Restart order: agents stop first (back at the gate), then the conductor and only
    # then the switches, as at bring-up (switches depend on a healthy conductor).
    RESTART_ORDER = (("agent", "waiting"), ("conductor", "ready"), ("switch", "ready"))

    def restart_programs(self, timeout_s: float, settle_s: float = 0.0,
                         first_switch: str | None = None) -> Restarted:
        """The next start of a supervised (gated) stack's programs, in the same
        containers: the agents stop theirs and wait at the gate again, then the
        conductor and the switches start theirs again and pass their readiness test
        (`first_switch`, the node the others dial, before them), then `settle_s` more
        (the overlay's servers_settle_s). One signal per group; the marks are files
        (gate.wait_for_marks). A container whose program has ended is started again,
        and named."""
        begun = time.monotonic()
        start = self.gate_releases + 1
        self.deployment.write_start(start)
        stuck: list[str] = []
        revived: list[str] = []
        for role, kind in self.RESTART_ORDER:
            for group in first_of(self.containers(role),
                                  first_switch if role == "switch" else None):
                revived += self.signal_restart(group)
                stuck += self.deployment.wait_for_marks(
                    [self.service_of(c.name) for c in group], kind, start, timeout_s)
        time.sleep(settle_s)
        seconds = time.monotonic() - begun
        self.release_overhead_s += seconds
        return Restarted(tuple(stuck), tuple(revived), seconds)

    def signal_restart(self, containers: list[Listed]) -> list[str]:
        """SIGUSR1 to the running ones; those whose program ended are started again
        instead: their names."""
        revived = [self.service_of(c.name) for c in containers
                   if c.state != "running" and self.engine.start(c)]
        self.engine.signal([c.name for c in containers if c.state == "running"], "USR1")
        return revived

    def service_of(self, container_name: str) -> str:
        """A container's service in the compose file (its name without the project)."""
        return container_name.removeprefix(f"{self.rendered.project}-")

    def release_gate(self) -> GateOpened:
        """Open the start gate once the host is quiet (bounded); the release time."""
        settle_s, quiet = wait_until_quiet()
        self.release_overhead_s += settle_s
        released = self.deployment.release()
        self.gate_releases += 1
        return GateOpened(released, settle_s, quiet)

    def save_logs(self, directory: Path) -> None:
        """Keep every container's log in the run directory (and on the stack, for events)."""
        directory.mkdir(parents=True, exist_ok=True)
        self.saved_logs = self.logs(quick=True, at_once=True)
        for source in self.saved_logs:
            write_text_atomic(directory / f"{source.container}.log", source.text)

    def down(self) -> Removed:
        """Remove everything of the run, wherever the engine put it."""
        return self.deployment.down()


SETTLE_POLL_SECONDS = 0.5  # one container listing (one CLI call) per look
# An agent a server refused (vNet's snapshot: "Rejected agent: invalid token", and the
# agent does not try again) is failed once it has stayed refused and unmarked for
# REFUSAL_GRACE_S (time for one that does try again: join.py's REFUSED_GRACE_S), the
# servers' logs read once no agent became ready for REFUSAL_LOOK_S; it waited out its mark's bound
# before (a bring-up of 4 vNet agents took 33.3 s for one refused agent, 4 s without).
REFUSAL_LOOK_S = 2.0
REFUSAL_GRACE_S = 3.0
Refused = Callable[[set[str]], dict[str, str]]  # agents starting -> refused ones: why


class GivenUp:
    """Which starting agents a server refused for good (`refused`: the overlay reads
    its servers' logs), each refused for REFUSAL_GRACE_S or more; their reasons."""

    def __init__(self, refused: Refused) -> None:
        self.refused = refused
        self.looked = self.changed = -REFUSAL_LOOK_S
        self.starting: set[str] = set()
        self.first_seen: dict[str, float] = {}
        self.reasons: dict[str, str] = {}

    def of(self, starting: set[str]) -> set[str]:
        """Read again only once no agent became ready for REFUSAL_LOOK_S (a bring-up
        still moving is not slowed by the reading), at most that often."""
        now = time.monotonic()
        if starting != self.starting:
            self.starting, self.changed = set(starting), now
        if starting and now - max(self.looked, self.changed) >= REFUSAL_LOOK_S:
            self.looked = now
            found = self.refused(starting)
            self.first_seen = {agent: self.first_seen.get(agent, now) for agent in found}
            self.reasons.update(found)
        return {agent for agent in starting
                if now - self.first_seen.get(agent, now) >= REFUSAL_GRACE_S}
# A service without a health check (marked_services) that has no mark this long after
# its start has failed: the start period its health check had (a baseline agent marks
# once its route is set, a gated agent's wrapper once it waits at the gate: both within
# a second of the start)
MARK_WITHIN_S = 60.0


def compose_spec(compose_file: Path) -> dict[str, Any]:
    """A rendered compose file's contents ({} when it cannot be read)."""
    try:
        spec = yaml.safe_load(compose_file.read_text()) or {}
    except (OSError, yaml.YAMLError):
        return {}
    return spec if isinstance(spec, dict) else {}


def marked_services(spec: dict[str, Any]) -> dict[str, str]:
    """The services a stack knows are ready by a mark in the run's marks directory, not
    a health check (an exec per check, most of the engine's work beyond its floor at 200
    agents: docs/cost.md): service -> the mark's kind, 'waiting' behind the start gate,
    else 'ready'. The ones with VNETBENCH_MARKS and no health check."""
    found = {}
    for name, service in (spec.get("services") or {}).items():
        environment = (service or {}).get("environment") or {}
        if isinstance(environment, list):
            environment = dict(str(item).partition("=")[::2] for item in environment)
        if "VNETBENCH_MARKS" in environment and not (service or {}).get("healthcheck"):
            found[str(name)] = "waiting" if "VNETBENCH_GATE" in environment else "ready"
    return found


def shortest_start_period(spec: dict[str, Any]) -> float:
    """The shortest health-check start period (seconds) a compose file's contents give
    ("60s"; 0 when a check has none, or when there is no check)."""
    periods = []
    for service in (spec.get("services") or {}).values():
        check = (service or {}).get("healthcheck")
        if check:
            period = str(check.get("start_period") or "0s")
            periods.append(float(period[:-1]) if period.endswith("s") and
                           period[:-1].replace(".", "", 1).isdigit() else 0.0)
    return min(periods, default=0.0)


def judged(states: dict[str, tuple[str | None, str]], timeout_s: float, said: str,
           logs: Path) -> list[str]:
    """After the engine's wait failed (`said`): the agents not ready, if the stack can
    run without them; else a UserError naming the containers still starting or not
    ready."""
    if not states:
        raise UserError(f"The topology did not come up: {said} Its logs are kept in {logs}.")
    starting = sorted(name for name, (_, state) in states.items() if state == "starting")
    if starting:
        raise UserError(
            f"The topology did not come up within {timeout_s:g} s: {len(starting)} "
            f"container(s) still starting ({', '.join(starting[:10])}"
            f"{', ...' if len(starting) > 10 else ''}). A health check that never passes "
            "(or an agent's ready mark that never appears) keeps a container starting; "
            f"their logs are kept in {logs}.")
    failed = sorted(name for name, (_, state) in states.items() if state == "failed")
    agents = [name for name, (role, _) in states.items() if role == "agent"]
    if any(states[name][0] != "agent" for name in failed) or (
            failed and len(failed) == len(agents)):
        raise UserError(f"The topology did not come up: {', '.join(failed)} did not become "
                        "ready (exited, unhealthy, still unchecked past its health "
                        "check's start period, or without its ready mark "
                        f"{MARK_WITHIN_S:g} s after its start); the engine said: "
                        f"{said[-800:]} Their logs are kept in {logs}.")
    return failed


def first_of(containers: list[Listed], node: str | None) -> list[list[Listed]]:
    """The containers in the groups they restart in: the node's first, when given."""
    if node is None:
        return [containers]
    first = [c for c in containers if c.labels.get(labels.NODE) == node]
    rest = [c for c in containers if c not in first]
    return [group for group in (first, rest) if group]


@dataclass(frozen=True)
class Restarted:
    """Programs started again in place (Stack.restart_programs)."""

    stuck: tuple[str, ...]  # services not back at the gate, or not ready again, in time
    revived: tuple[str, ...]  # containers whose program had ended, started again
    seconds: float


@dataclass(frozen=True)
class GateOpened:
    """A release of the start gate (Stack.release_gate)."""

    released: float  # epoch seconds, taken before the pipe opens
    settle_s: float  # waited for a quiet host first
    quiet: bool  # False: the host stayed busy and the gate opened at the bound


