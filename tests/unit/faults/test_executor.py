"""A schedule of faults run: each edge's rule steps (the link's on every edge, a
partition's on its own switches' edges only), its helper running them in order at
their instants and stamping each, the engine's steps fired from a thread in order,
each event's window from its own stamps, and no rule left standing."""

from __future__ import annotations

import subprocess
import time
from datetime import UTC, datetime
from ipaddress import IPv4Network
from pathlib import Path
from typing import Any

import pytest

from tests.unit.faults.test_edges import LocalHelpers, LocalRun, stand_ins
from tests.unit.faults.test_schedule import room
from vnetbench.engines.base import Listed
from vnetbench.faults import executor
from vnetbench.faults.edges import Edge
from vnetbench.faults.executor import (
    HELPER,
    NONE,
    RuleStep,
    ScheduleRun,
    ScheduleRunner,
    parse_edge_helper,
    rule_steps,
    sources_of,
)
from vnetbench.faults.schedule import EVERY_EDGE, Action, Cut, Target, expand
from vnetbench.faults.window import LATE_BOUND_S, Stamp
from vnetbench.model.addressing import plan_addresses
from vnetbench.model.topology import parse_topology

EDGES = [Edge(f"router-switch{n}", f"router-switch{n}", f"10.9.0.{n}", f"p-f-switch{n}")
         for n in (1, 2, 3)]


def plan_of(schedule_room: Any) -> Any:
    return plan_addresses(schedule_room, "r", IPv4Network("10.190.0.0/16"))


def test_a_flap_puts_its_rule_in_and_out_on_every_edge_in_order() -> None:
    topology = room({"at": "1s", "flap": "backbone", "times": 2, "down": "200ms",
                     "up": "300ms"})
    own = rule_steps(expand(topology), EDGES, plan_of(topology), zero=100.0)
    assert sorted(own) == [e.helper for e in EDGES]
    steps = own["p-f-switch1"]
    assert [(s.at, s.op) for s in steps] == [(101.0, "on"), (101.2, "off"), (101.5, "on"),
                                              (101.7, "off")]
    assert {(s.probability, s.sources) for s in steps} == {(NONE, NONE)}


def test_a_partition_acts_on_its_switches_edges_against_the_other_side() -> None:
    topology = room({"at": "1s", "partition": [["switch1"], ["switch2"]], "for": "1s"})
    plan = plan_of(topology)
    own = rule_steps(expand(topology), EDGES, plan, zero=0.0)
    assert sorted(own) == ["p-f-switch1", "p-f-switch2"]  # switch3 reaches both sides
    on, off = own["p-f-switch1"]
    assert (on.op, off.op) == ("on", "off") and off.at - on.at == pytest.approx(1.0)
    assert on.sources == off.sources == (f"{plan.switch_backbone['switch2']},"
                                         f"{plan.sites['switch2'].subnet}")


def test_a_partition_s_cut_drops_what_the_peer_switch_sends_or_forwards() -> None:
    topology = parse_topology({"name": "t", "switches": 3, "agents": 3}, "t")
    plan = plan_addresses(topology, "r", IPv4Network("10.190.0.0/16"))
    assert sources_of(plan, Cut("switch1", "switch3")) == "10.190.0.12,10.190.48.0/20"
    assert sources_of(plan, EVERY_EDGE) == NONE


def test_a_switch_cut_from_two_peers_drops_both_in_one_rule() -> None:
    """One iptables call: both peers cut at one instant, not one after the other."""
    topology = room({"at": "1s", "partition": [["switch1"], ["switch2", "switch3"]],
                     "for": "1s"})
    plan = plan_of(topology)
    own = rule_steps(expand(topology), EDGES, plan, zero=0.0)
    assert [len(own[e.helper]) for e in EDGES] == [2, 2, 2]
    assert own["p-f-switch1"][0].sources == ",".join(
        f"{plan.switch_backbone[p]},{plan.sites[p].subnet}" for p in ("switch2", "switch3"))


def test_a_loss_burst_drops_a_share_and_takes_the_same_rule_out() -> None:
    topology = room({"at": "1s", "loss": "30%", "for": "1s"})
    on, off = rule_steps(expand(topology), EDGES[:1], plan_of(topology), 0.0)["p-f-switch1"]
    assert on.probability == off.probability == "0.300000"


def run_edge_script(tmp_path: Path, steps: list[RuleStep]) -> tuple[str, Path]:
    """The tools image's edge helper (vnetbench-fault) here, with ip and iptables
    stand-ins (iptables logs its arguments with the time): its output and the log."""
    bin_dir, log = tmp_path / "bin", tmp_path / "iptables.log"
    bin_dir.mkdir()
    done = subprocess.run([HELPER, "stage", "10.9.0.2", "\n".join(s.line for s in steps)],
                          env=stand_ins(bin_dir, log), capture_output=True, text=True,
                          timeout=20)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout, log


@pytest.mark.skipif(not Path("/usr/bin/python3").exists(), reason="vnetbench-at needs it")
def test_the_edge_helper_runs_each_step_at_its_instant_and_stamps_it(tmp_path: Path) -> None:
    zero = time.time() + 0.6
    steps = [RuleStep(4, zero, "on", "0.300000", "10.1.0.2,10.2.0.0/24"),
             RuleStep(7, zero + 0.3, "off", "0.300000", "10.1.0.2,10.2.0.0/24")]
    output, log = run_edge_script(tmp_path, steps)
    stamps, failure = parse_edge_helper(output)
    assert failure is None and sorted(stamps) == [4, 7]
    # each began at its instant, not before, and its stamp follows iptables' return
    assert stamps[4].began >= zero and stamps[7].began >= zero + 0.3
    calls = [line.split(" ", 1) for line in log.read_text().splitlines()]
    commands = [" ".join(words.split()[1:]) for _, words in calls]
    chain = "vnbf-eth1"
    # an earlier helper's chain taken out (quietly), its own staged: an empty chain and
    # the jump to it first in raw PREROUTING; the rule appended at the instant, the
    # chain flushed at the lift; the chain and its jump taken out at the end
    remove = [f"-t raw -F {chain}", f"-t raw -D PREROUTING -i eth1 -j {chain}",
              f"-t raw -X {chain}"]
    match = ("-m statistic --mode random --probability 0.300000 "
             "-s 10.1.0.2,10.2.0.0/24 -j DROP")
    assert commands == [*remove, f"-t raw -N {chain}",
                        f"-t raw -I PREROUTING 1 -i eth1 -j {chain}",
                        f"-t raw -A {chain} {match}", f"-t raw -F {chain}", *remove]
    assert zero <= float(calls[5][0]) <= (stamps[4].done or 0)
    assert zero + 0.3 <= float(calls[6][0]) <= (stamps[7].done or 0)
    assert output.rstrip().endswith("vnetbench-fault: done")


def test_a_helper_s_failed_step_is_named() -> None:
    text = ("vnetbench-fault: staged dev=eth1\nvnetbench-at began=10.0 late_s=0.001\n"
            "vnetbench-fault: step=2 at=10.01\nvnetbench-at began=11.0 late_s=0.001\n"
            "vnetbench-fault: failed step=5 (iptables exit 1)\n")
    stamps, failure = parse_edge_helper(text)
    assert list(stamps) == [2] and stamps[2].done == pytest.approx(10.01)
    assert failure == "step 5: (iptables exit 1)"
    assert parse_edge_helper("")[1] is not None  # never started


class Engine(LocalHelpers):
    """Local helpers, and kills and starts recorded with their instants; a container
    started again says it started (StartedAt) 20 ms before its restart returns, as
    the engine's does."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.calls: list[tuple[str, str, float]] = []
        self.started_at: dict[str, float] = {}

    def signal(self, names: list[str], signal: str) -> None:
        self.calls += [(signal, n, time.time()) for n in names]

    def restart(self, name: str) -> None:
        self.calls.append(("start", name, time.time()))
        self.started_at[name] = time.time()
        time.sleep(0.02)

    def containers(self, filters: list[tuple[str, str]]) -> list[Listed]:
        name = filters[0][1].strip("^$")
        if name in self.started_at:
            return [Listed(name, name, "running", None, {})]
        return super().containers(filters)

    def health_started(self, container: Listed) -> tuple[datetime | None, float]:
        return datetime.fromtimestamp(self.started_at[container.name], UTC), 0.0


@pytest.mark.skipif(not Path("/usr/bin/python3").exists(), reason="vnetbench-at needs it")
def test_a_schedule_runs_its_rules_and_engine_steps_at_their_instants(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A flap on two edges (staged helpers) beside a switch restart and a churn (the
    engine's steps): every step at or after its instant, in order, each event's window
    from its own stamps; a machine started again is announced; no rule left."""
    bin_dir, log = tmp_path / "bin", tmp_path / "iptables.log"
    bin_dir.mkdir()
    env = stand_ins(bin_dir, log)
    (bin_dir / "ip").write_text("#!/bin/sh\necho \"2: eth1    inet $ADDRESS/24 scope global\"\n")
    targets = {e.container: {"ADDRESS": e.address} for e in EDGES[:2]}
    engine = Engine(tmp_path, env, targets)
    monkeypatch.setattr(executor, "backbone_edges", lambda run, prefix: EDGES[:2])
    topology = room({"at": "300ms", "flap": "backbone", "times": 2, "down": "200ms",
                     "up": "200ms"},
                    {"at": "400ms", "kill": "switch3", "restart_after": "300ms"},
                    {"at": "500ms", "churn": "10%", "over": "400ms"})
    schedule = expand(topology)
    started: list[tuple[Target, float]] = []
    runner = ScheduleRunner(LocalRun(engine), schedule, plan_of(topology), "p",
                            lambda target: [f"c-{target.name}"], lambda shape: None,
                            lambda target, at: started.append((target, at)))
    zero = time.time() + 1.0
    runner.stage(zero)
    runner.fire()
    ran = runner.finish()
    assert ran.failures == {}
    for index, step in enumerate(schedule.steps):  # every step, none before its instant
        stamp = (ran.engine.get(index) if step.action in (Action.KILL, Action.START)
                 else ran.rules["p-f-switch1"].get(index))
        assert stamp is not None and stamp.began >= zero + step.at_ms / 1000 - 1e-3
    kills = [(what, name) for what, name, _ in engine.calls]
    churned = [t.name for e in schedule.events if e.label == "churn" for t in e.targets]
    # dispatched to several workers at once: targets 100 ms apart may run in either
    # order on a loaded host, but each target is killed once and started after its kill
    for name in ("switch3", *churned):
        assert kills.count(("KILL", f"c-{name}")) == kills.count(("start", f"c-{name}")) == 1
        assert kills.index(("KILL", f"c-{name}")) < kills.index(("start", f"c-{name}"))
    assert sorted(t.name for t, _ in started) == sorted(["switch3", *churned])
    windows = {e.label: ran.window(schedule, e) for e in schedule.events}
    flap = windows["backbone-flap"]
    assert len(flap.edges) == 2 and flap.start is not None and flap.end is not None
    # the flap's window: from its first rule in (300 ms) to its last rule out (900 ms):
    # no stamp before its step's instant (how late after it depends on this host's load)
    assert zero + 0.3 <= flap.start < flap.end and flap.end >= zero + 0.9
    restart = windows["switch-restart"]
    assert [e.edge.startswith("engine") for e in restart.edges] == [True]
    assert restart.start is not None and restart.end is not None
    # the restart took effect where the engine says the container started, before the
    # call returned
    assert restart.end == pytest.approx(engine.started_at["c-switch3"], abs=1e-5)
    lift = restart.edges[0].lift
    assert lift is not None and lift.began <= restart.end < lift.began + 0.02
    assert zero + 0.4 <= restart.start < restart.end and restart.end >= zero + 0.7
    assert engine.cleared == []  # every rule taken out by its own step
    assert engine.running == {}  # every helper removed


def test_an_engine_step_not_stamped_is_the_event_s_failure() -> None:
    topology = room({"at": "1s", "kill": "switch3", "restart_after": "1s"})
    schedule = expand(topology)
    ran = ScheduleRun(engine={0: Stamp(10.0, 0.001, 10.1)},
                      failures={"step 1": "start at 2000 ms failed: no such container"})
    window = ran.window(schedule, schedule.events[0])
    assert window.start == pytest.approx(10.1) and window.end is None
    assert window.edges[0].failure == "start at 2000 ms failed: no such container"


def test_an_event_s_window_is_its_latest_edge_s_first_and_last_stamps() -> None:
    schedule = expand(room({"at": "1s", "link": "backbone", "for": "1s"}))
    ran = ScheduleRun(planned={"a": [0, 1], "b": [0, 1]},
                      rules={"a": {0: Stamp(1.0, 0.0, 1.01), 1: Stamp(2.0, 0.0, 2.01)},
                             "b": {0: Stamp(1.0, 0.0, 1.02), 1: Stamp(2.0, 0.0, 2.03)}})
    window = ran.window(schedule, schedule.events[0])
    assert window.start == pytest.approx(1.02) and window.end == pytest.approx(2.03)
    half = ScheduleRun(planned={"a": [0, 1]}, rules={"a": {0: Stamp(1.0, 0.0, 1.01)}})
    edge = half.window(schedule, schedule.events[0]).edges[0]
    assert edge.lift is None and edge.failure == "1 of its 2 steps were not stamped"


def test_a_loss_ramp_sets_each_level_s_share_on_every_edge_then_takes_it_out() -> None:
    """Planned loss 10 %: a level of 20 % drops (20 - 10) / 90 of what the shapers leave."""
    topology = room({"at": "1s", "ramp": "loss", "from": "10%", "to": "28%", "over": "1s"},
                    loss="10%")
    own = rule_steps(expand(topology), EDGES, plan_of(topology), zero=0.0)
    steps = own["p-f-switch1"]
    assert [s.op for s in steps] == ["set", "set", "set", "off"]
    assert [s.at for s in steps] == [1.0, 1.5, 2.0, 2.5]  # levels 500 ms apart, held one
    assert [s.probability for s in steps[:3]] == ["0.000000", "0.100000", "0.200000"]


@pytest.mark.skipif(not Path("/usr/bin/python3").exists(), reason="vnetbench-at needs it")
def test_a_set_step_flushes_the_chain_and_appends_the_level(tmp_path: Path) -> None:
    zero = time.time() + 0.5
    steps = [RuleStep(1, zero, "set", "0.100000", NONE),
             RuleStep(2, zero + 0.2, "set", "0.200000", NONE),
             RuleStep(3, zero + 0.4, "off", "0.200000", NONE)]
    output, log = run_edge_script(tmp_path, steps)
    stamps, failure = parse_edge_helper(output)
    assert failure is None and sorted(stamps) == [1, 2, 3]
    commands = [" ".join(line.split()[2:]) for line in log.read_text().splitlines()]
    chain = "vnbf-eth1"
    assert commands[5:10] == [
        f"-t raw -F {chain}",
        f"-t raw -A {chain} -m statistic --mode random --probability 0.100000 -j DROP",
        f"-t raw -F {chain}",
        f"-t raw -A {chain} -m statistic --mode random --probability 0.200000 -j DROP",
        f"-t raw -F {chain}"]


def test_a_cancelled_schedule_fires_nothing_more_and_returns_at_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C before its steps: no kill or start reaches the engine, and cancel does not
    wait for the steps' instants (60 s away: it returns well before them)."""
    engine = Engine(tmp_path, {}, {})
    monkeypatch.setattr(executor, "backbone_edges", lambda run, prefix: [])
    topology = room({"at": "60s", "kill": "switch3", "restart_after": "1s"})
    schedule = expand(topology)
    runner = ScheduleRunner(LocalRun(engine), schedule, plan_of(topology), "p",
                            lambda target: [f"c-{target.name}"], lambda shape: None,
                            lambda target, at: None)
    runner.stage(time.time())
    runner.fire()
    began = time.monotonic()
    runner.cancel()
    assert time.monotonic() - began < 30
    assert engine.calls == []
    assert all(why.endswith("was not run: the run was stopped")
               for why in runner.stamps.failures.values())
    assert len(runner.stamps.failures) == 2  # the kill and the start, both said


def test_a_spike_s_lift_holds_its_span_from_when_a_slow_reshape_took_effect() -> None:
    """Re-shaping takes its time (a shaper per container): a lift due 200 ms after its
    apply, which takes 300 ms, begins 200 ms after the apply returned, not at once at
    its bare instant, and is not late against that."""
    schedule = expand(room({"at": "100ms", "delay": "50ms", "for": "200ms"}))
    shaped: list[tuple[object, float]] = []

    def reshape(shape: object) -> None:
        time.sleep(0.3 if shape is not None else 0.0)
        shaped.append((shape, time.time()))

    topology = room({"at": "100ms", "delay": "50ms", "for": "200ms"})
    runner = ScheduleRunner(LocalRun(None), schedule, plan_of(topology), "p",
                            lambda target: [], reshape, lambda target, at: None)
    zero = time.time() + 0.2
    runner.stage(zero)
    runner.fire()
    ran = runner.finish()
    assert ran.failures == {}
    apply, lift = ran.engine[0], ran.engine[1]
    assert apply.began >= zero + 0.1 and apply.done is not None
    assert apply.done - apply.began >= 0.3
    # the declared 200 ms from the apply's effect, within a scheduler's wake-up
    assert lift.began >= apply.done + 0.2
    assert lift.late_s <= LATE_BOUND_S * 5  # from its held instant, a thread's wake-up
    window = ran.window(schedule, schedule.events[0])
    assert window.measured_ms is not None and window.measured_ms >= 200
