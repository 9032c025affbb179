"""Join passes on kept containers: the compose file of a gated stack puts every
program of the system under test under the entry wrapper's supervision, and the
wrapper itself (plain bash, run here on the host: no engine) stops and starts its
program on SIGUSR1, behind the gate again, leaving the marks vnetbench reads."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import time
from collections.abc import Callable
from ipaddress import IPv4Network
from pathlib import Path
from typing import cast

import pytest
import yaml

from vnetbench.deploy.render import render_compose
from vnetbench.engines.base import Listed
from vnetbench.engines.stack import Restarted, Stack, first_of, marked_services
from vnetbench.model.addressing import plan_addresses
from vnetbench.model.topology import parse_topology
from vnetbench.overlays import overlay_for
from vnetbench.runtime import gate
from vnetbench.runtime.images import ImageSet
from vnetbench.scenarios.base import ScenarioContext
from vnetbench.scenarios.join import Join

WAIT_S = 10.0  # generous: bash and sleep start in milliseconds even on a busy machine


def rendered(overlay: str, start_gate: bool) -> dict:
    topology = parse_topology({"name": "t", "switches": 2, "agents": 3, "overlay": overlay,
                               "start_gate": start_gate}, "t.yml")
    plan = plan_addresses(topology, "r1", IPv4Network("10.170.0.0/16"))
    return yaml.safe_load(render_compose(topology, overlay_for(topology), "r1", plan,
                                         ImageSet()))


@pytest.mark.parametrize("overlay", ["wireguard", "nebula", "openvpn", "tinc"])
def test_a_gated_stack_supervises_every_program_of_the_system(overlay: str) -> None:
    services = rendered(overlay, start_gate=True)["services"]
    system = {name: s for name, s in services.items()
              if s["labels"]["vnetbench.role"] in ("conductor", "switch", "agent")}
    assert {s["labels"]["vnetbench.role"] for s in system.values()} >= {"switch", "agent"}
    for name, service in system.items():
        assert service["entrypoint"][0] == gate.ENTRY, name
        assert service["environment"]["VNETBENCH_MARKS"] == f"{gate.MARKS_MOUNT}/{name}"
        assert f"./gate/marks:{gate.MARKS_MOUNT}" in service["volumes"]
        assert sum(v == "./gate:/vnetbench:ro" for v in service["volumes"]) == 1
        gated = "VNETBENCH_GATE" in service["environment"]
        assert gated == (service["labels"]["vnetbench.role"] == "agent"), name
        # servers come back through their own health check, run by the wrapper
        assert ("VNETBENCH_READY" in service["environment"]) == (not gated), name
        # agents start again without the last start's neighbour entries
        assert ("VNETBENCH_FORGET_NEIGHBOURS" in service["environment"]) == gated, name
    assert "VNETBENCH_MARKS" not in services["fabric"].get("environment", {})


@pytest.mark.parametrize(("overlay", "start_gate"), [
    ("baseline", False), *((o, True) for o in ("wireguard", "nebula", "openvpn", "tinc"))])
def test_agents_are_ready_by_a_mark_and_only_servers_run_health_checks(
        overlay: str, start_gate: bool) -> None:
    """A health check is an exec per container every 500 ms while it starts: agents (the
    many) say they are ready in the marks directory instead, read from the host. Every
    service another waits to be healthy for keeps its check (compose refuses the file
    otherwise)."""
    services = rendered(overlay, start_gate)["services"]
    marked = marked_services({"services": services})
    agents = [n for n, s in services.items() if s["labels"]["vnetbench.role"] == "agent"]
    assert agents and set(marked) == set(agents)
    for name in agents:
        assert "healthcheck" not in services[name], name
        assert marked[name] == ("waiting" if start_gate else "ready")
        assert f"./gate/marks:{gate.MARKS_MOUNT}" in services[name]["volumes"]
    checked = [n for n, s in services.items() if "healthcheck" in s]
    assert 0 < len(checked) <= 2 + 2  # fabric, a CA or a first hub, and 2 switches
    for service in services.values():
        waits = service.get("depends_on") or {}
        for target, condition in (waits.items() if isinstance(waits, dict) else ()):
            if condition.get("condition") == "service_healthy":
                assert "healthcheck" in services[target], target
    if overlay == "baseline":  # marked after its route, before it drops NET_ADMIN; a
        script = services["agent1"]["command"][-1]  # restart's mark is its own
        mark = f"{gate.MARKS_MOUNT}/agent1.ready.1"
        assert script.index(f"rm -f {mark}") < script.index("ip route replace") < \
            script.index(f": > {mark}") < script.index("exec setpriv")


def test_a_gated_agent_that_marks_itself_is_marked_by_the_wrapper_after_its_set_up() -> None:
    """Supervised (a gated stack), a baseline agent's wrapper marks it ready when its
    own script has set its route, not when the script starts."""
    services = rendered("baseline", start_gate=True)["services"]
    assert services["agent1"]["environment"]["VNETBENCH_READY"] == \
        f"test -f {gate.READY_FILE}"
    assert services["agent1"]["volumes"].count(f"./gate/marks:{gate.MARKS_MOUNT}") == 1


def test_an_ungated_stack_is_left_as_its_templates_write_it() -> None:
    services = rendered("wireguard", start_gate=False)["services"]
    assert not any("VNETBENCH_MARKS" in s.get("environment", {}) for s in services.values())
    assert "entrypoint" not in services["hub-switch1"]


def test_health_checks_become_shell_commands() -> None:
    assert gate.shell_test(["CMD", "test", "-f", "/run/x y"]) == "test -f '/run/x y'"
    assert gate.shell_test(["CMD-SHELL", "wg show | grep -q peer"]) == "wg show | grep -q peer"
    assert gate.shell_test("pgrep tincd") == "pgrep tincd"


def test_latest_release_stamp_and_since() -> None:
    log = "vnetbench-gate released 100.5\nx\nvnetbench-gate released 200.25\n"
    assert gate.release_stamp(log) == 200.25
    assert gate.release_stamp(log, since=150) == 200.25
    assert gate.release_stamp(log, since=300) is None


def test_marks_are_waited_for_and_the_missing_named(tmp_path: Path) -> None:
    directory = gate.prepare_gate(tmp_path)
    (directory / "marks" / "agent1.waiting.2").touch()
    assert gate.wait_for_marks(directory, ["agent1"], "waiting", 2, 0.1) == []
    assert gate.wait_for_marks(directory, ["agent1", "agent2"], "waiting", 2, 0.1) == ["agent2"]
    assert gate.marks_missing(directory, ["agent1"], "ready", 2) == ["agent1"]


def wait_for(path: Path) -> None:
    deadline = time.monotonic() + WAIT_S
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.02)


def open_gate(fifo: Path, released: Callable[[], bool]) -> None:
    """Hold the gate open until the released side's sign: a wrapper still between its
    mark and its open() meets it open however late the host runs it (a fixed 0.2 s
    hold, as gate.release's, could end first on a loaded host, and the test waited
    for a program never released)."""
    descriptor = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
    try:
        deadline = time.monotonic() + WAIT_S
        while not released():
            assert time.monotonic() < deadline, "nothing came through the gate"
            time.sleep(0.02)
    finally:
        os.close(descriptor)


def started(pids: Path, count: int = 1) -> Callable[[], bool]:
    """The program has started `count` times (each start writes its pid)."""
    return lambda: pids.exists() and len(pids.read_text().split()) >= count


def own_state(tmp_path: Path) -> dict[str, str]:
    """The wrapper's own file in the test's directory, not the host's /run."""
    return {**os.environ, "VNETBENCH_READY_FILE": str(tmp_path / "ready-file")}


@pytest.fixture
def wrapper(tmp_path: Path):  # type: ignore[no-untyped-def]
    """The entry wrapper supervising a program that writes its pid, behind a gate."""
    directory = gate.prepare_gate(tmp_path)
    environment = {**own_state(tmp_path), "VNETBENCH_GATE": str(directory / "release"),
                   "VNETBENCH_MARKS": str(directory / "marks" / "agent1")}
    program = f"echo $$ >> {tmp_path}/pids; exec sleep 60"
    process = subprocess.Popen([str(directory / "vnetbench-entry"), "bash", "-c", program],
                               env=environment, stdout=subprocess.PIPE, text=True)
    yield directory, tmp_path / "pids", process
    if process.poll() is None:
        process.kill()
    process.wait()


def test_the_wrapper_restarts_its_program_behind_the_gate(wrapper) -> None:  # type: ignore[no-untyped-def]
    directory, pids, process = wrapper
    marks = directory / "marks"
    wait_for(marks / "agent1.waiting.1")
    time.sleep(0.2)
    assert not pids.exists(), "the program started before the gate opened"
    open_gate(directory / "release", started(pids))
    first = int(pids.read_text())
    gate.write_start(directory, 2)  # as Stack.restart_programs does before its signal
    process.send_signal(signal.SIGUSR1)
    wait_for(marks / "agent1.waiting.2")
    with pytest.raises(ProcessLookupError):  # stopped, and only then at the gate again
        os.kill(first, 0)
    assert len(pids.read_text().split()) == 1, "started again before the gate opened"
    open_gate(directory / "release", started(pids, 2))
    second = int(pids.read_text().split()[1])
    assert second != first and process.poll() is None
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=WAIT_S) == 143
    with pytest.raises(ProcessLookupError):
        os.kill(second, 0)
    assert process.stdout is not None
    output = process.stdout.read()
    assert output.count("vnetbench-gate released") == 2
    assert "start 2: program started again" in output


def test_a_restart_behind_the_gate_forgets_the_neighbours_first(tmp_path: Path) -> None:
    """As a fresh container's, the table is empty when the program starts again; not
    at the first start (nothing to forget), and only when asked (this test's host
    keeps its own: `ip` is a stand-in that writes what it was asked)."""
    directory = gate.prepare_gate(tmp_path)
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "ip").write_text(f"#!/bin/sh\necho \"$*\" >> {tmp_path}/ip-calls\n")
    (tools / "ip").chmod(0o755)
    environment = {**own_state(tmp_path), "VNETBENCH_GATE": str(directory / "release"),
                   "VNETBENCH_MARKS": str(directory / "marks" / "agent1"),
                   "VNETBENCH_FORGET_NEIGHBOURS": "1",
                   "PATH": f"{tools}:{os.environ['PATH']}"}
    pids = tmp_path / "pids"
    process = subprocess.Popen([str(directory / "vnetbench-entry"), "bash", "-c",
                                f"echo $$ >> {pids}; exec sleep 60"],
                               env=environment, stdout=subprocess.DEVNULL)
    try:
        wait_for(directory / "marks" / "agent1.waiting.1")
        open_gate(directory / "release", started(pids))
        # it forgets before the gate, so by the program's start it would have
        assert not (tmp_path / "ip-calls").exists()
        gate.write_start(directory, 2)
        process.send_signal(signal.SIGUSR1)
        wait_for(directory / "marks" / "agent1.waiting.2")
        assert (tmp_path / "ip-calls").read_text() == "neigh flush all\n"
    finally:
        process.kill()
        process.wait()


def test_a_supervised_server_marks_ready_and_ends_with_its_program(tmp_path: Path) -> None:
    directory = gate.prepare_gate(tmp_path)
    ready = tmp_path / "ready"
    environment = {**own_state(tmp_path), "VNETBENCH_MARKS": str(directory / "marks" / "hub"),
                   "VNETBENCH_READY": f"test -f {ready}"}
    program = f"sleep 0.3; touch {ready}; sleep 1; exit 7"
    process = subprocess.run([str(directory / "vnetbench-entry"), "bash", "-c", program],
                             env=environment, timeout=WAIT_S, capture_output=True)
    assert process.returncode == 7  # the program ending on its own ends the container
    assert (directory / "marks" / "hub.ready.1").exists()


def test_a_server_without_a_readiness_test_is_ready_once_started(tmp_path: Path) -> None:
    directory = gate.prepare_gate(tmp_path)
    environment = {**own_state(tmp_path), "VNETBENCH_MARKS": str(directory / "marks" / "hub")}
    subprocess.run([str(directory / "vnetbench-entry"), "true"], env=environment,
                   timeout=WAIT_S, check=True)
    assert (directory / "marks" / "hub.ready.1").exists()


def test_a_container_still_at_the_gate_answers_the_next_restart(wrapper) -> None:  # type: ignore[no-untyped-def]
    """One that was never released (it came after the release's hold) marks the next
    start when signalled, so later passes do not wait for it in vain."""
    directory, pids, process = wrapper
    wait_for(directory / "marks" / "agent1.waiting.1")
    gate.write_start(directory, 2)
    process.send_signal(signal.SIGUSR1)
    wait_for(directory / "marks" / "agent1.waiting.2")
    assert not pids.exists() and process.poll() is None
    open_gate(directory / "release", started(pids))  # released by the next opening


def test_preparing_a_gate_clears_stale_marks(tmp_path: Path) -> None:
    directory = gate.prepare_gate(tmp_path)
    (directory / "marks" / "agent1.waiting.2").touch()
    gate.write_start(directory, 2)
    directory = gate.prepare_gate(tmp_path)
    assert list((directory / "marks").iterdir()) == []
    assert (directory / "start").read_text() == "1\n"


def test_the_marks_directory_is_the_owner_s_alone(tmp_path: Path) -> None:
    """It was 0777; the wrapper writes it as root (gated containers run as root)."""
    old_umask = os.umask(0)  # the widest a umask would let through
    try:
        directory = gate.prepare_gate(tmp_path)
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE((directory / "marks").stat().st_mode) == 0o700


def test_the_stack_clock_takes_restarts_out_of_the_measurement() -> None:
    from vnetbench.runs.recording import StackClock

    clock = StackClock("join", [1, 2, 3], "programs (started again)")
    clock.marks, clock.restart_s = [0.0, 10.0, 40.0, 45.0], 6.0
    record = clock.record()
    assert {k: record[k] for k in ("bring_up_s", "restart_s", "measure_s", "teardown_s")} == {
        "bring_up_s": 10.0, "restart_s": 6.0, "measure_s": 24.0, "teardown_s": 5.0}
    assert record["fresh"] == {"pass 1": "containers and programs",
                               "pass 2": "programs (started again)",
                               "pass 3": "programs (started again)"}
    clock.marks = [0.0, 10.0]  # failed while measuring: only what was measured
    assert "measure_s" not in clock.record() and clock.record()["bring_up_s"] == 10.0


def test_a_restart_waits_for_every_process_of_the_program(tmp_path: Path) -> None:
    """A program's own daemon (wireguard-go under its shell) still closing after the
    shell died held its UDP port: the next start failed with 'Address already in use'.
    The wrapper starts again only once the whole process group is gone."""
    directory = gate.prepare_gate(tmp_path)
    gone, armed = tmp_path / "daemon-gone", tmp_path / "daemon-armed"
    environment = {**own_state(tmp_path), "VNETBENCH_MARKS": str(directory / "marks" / "hub")}
    # `armed` once its trap is set: a loaded host ran the test's SIGUSR1 before the
    # daemon had set it, and TERM then ended the daemon at once, leaving no `gone`
    daemon = (f"trap 'sleep 0.4; : > {gone}; exit 0' TERM; : > {armed}; "
              "while :; do sleep 0.05; done")
    program = f"sh -c \"{daemon}\" & wait"
    process = subprocess.Popen([str(directory / "vnetbench-entry"), "bash", "-c", program],
                               env=environment, stdout=subprocess.DEVNULL)
    try:
        wait_for(directory / "marks" / "hub.ready.1")
        wait_for(armed)
        gate.write_start(directory, 2)
        process.send_signal(signal.SIGUSR1)
        wait_for(directory / "marks" / "hub.ready.2")
        restarted = (directory / "marks" / "hub.ready.2").stat().st_mtime_ns
        assert gone.exists(), "started again while the old daemon was still running"
        # both instants from the file system's own clock: the wall clock `date` read
        # runs ahead of the kernel's coarse file times by up to a tick
        assert gone.stat().st_mtime_ns <= restarted
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=WAIT_S)


class RecordingStack:
    """Stands in for a gated stack: what a join pass asks of its restart."""

    def __init__(self) -> None:
        self.asked: list[tuple[float, str | None]] = []

    def restart_programs(self, timeout_s: float, settle_s: float = 0.0,
                         first_switch: str | None = None) -> Restarted:
        self.asked.append((settle_s, first_switch))
        return Restarted(stuck=(), revived=(), seconds=settle_s)


@pytest.mark.parametrize(("overlay", "settle", "first"),
                         [("tinc", 1.0, "switch1"), ("wireguard", 0.0, None)])
def test_a_join_pass_restarts_servers_as_their_overlay_asks(
        overlay: str, settle: float, first: str | None, tmp_path: Path) -> None:
    """tinc's hubs accept 10 connections a second: the hubs' own, made as they came
    up again, must fall in an earlier second than the agents' (as on a fresh stack);
    and they dial the first hub, which must listen before they start."""
    topology = parse_topology({"name": "t", "switches": 2, "agents": 3, "overlay": overlay},
                              "t.yml")
    plan = plan_addresses(topology, "r1", IPv4Network("10.170.0.0/16"))
    stack = RecordingStack()
    context = ScenarioContext(cast(Stack, stack), topology, overlay_for(topology), plan,
                              tmp_path)
    assert Join.restart(context, 2).seconds == settle
    assert stack.asked == [(settle, first)]


def test_the_first_switch_restarts_in_a_group_of_its_own() -> None:
    def listed(node: str) -> Listed:
        return Listed(id=node, name=f"p-hub-{node}", state="running", health=None,
                      labels={"vnetbench.node": node})

    hubs = [listed("switch2"), listed("switch1"), listed("switch3")]
    assert [[c.id for c in g] for g in first_of(hubs, "switch1")] == [
        ["switch1"], ["switch2", "switch3"]]
    assert first_of(hubs, None) == [hubs]
    assert first_of(hubs[:1], "switch1") == [hubs[:1]]
