"""CPU outside the testbed during a pass: the host's task time, less the run's own
containers and the testbed's own processes (another run's containers are outside);
a pass beside a tenth of the machine is marked."""

import os
from pathlib import Path

import pytest

from vnetbench.core.metrics import OUTSIDE_LOAD
from vnetbench.core.outcome import Kind, State, single
from vnetbench.measure.cpu import (
    HostSample,
    host_sample,
    host_task_seconds,
    others_seconds,
    outside_cores,
)
from vnetbench.runs.outcomes import OUTSIDE_LOAD_SHARE, mark_outside_load
from vnetbench.scenarios.base import PassResult

# /proc/stat's first line on this machine: user nice system idle iowait irq softirq steal
PROC_STAT = "cpu  31434 0 14313 136342 1394 0 1827 26 0 0\ncpu0 10562 0 6608 74367 237 0 826\n"


def test_host_task_time_leaves_idle_iowait_and_interrupts_out() -> None:
    tick = os.sysconf("SC_CLK_TCK")
    assert host_task_seconds(PROC_STAT) == pytest.approx((31434 + 0 + 14313 + 26) / tick)


def test_outside_is_what_neither_containers_nor_the_testbed_used() -> None:
    before = HostSample(at=0.0, tasks_s=100.0, containers_s=40.0, testbed_s=5.0)
    after = HostSample(at=10.0, tasks_s=115.0, containers_s=48.0, testbed_s=6.0)
    assert outside_cores(before, after) == pytest.approx(0.6)  # (15 - 8 - 1) / 10
    quiet = HostSample(at=10.0, tasks_s=108.0, containers_s=48.0, testbed_s=6.0)
    assert outside_cores(before, quiet) == 0.0  # rounding below zero is no load
    unknown = HostSample(at=10.0, tasks_s=115.0, containers_s=None, testbed_s=6.0)
    assert outside_cores(before, unknown) is None


def test_a_pass_beside_a_tenth_of_the_machine_is_marked_not_failed() -> None:
    limit = OUTSIDE_LOAD_SHARE * (os.cpu_count() or 1)
    quiet = PassResult({}, {})
    mark_outside_load(quiet, limit / 2)
    assert quiet.status == "ok" and quiet.metrics[OUTSIDE_LOAD.name][0] == round(limit / 2, 3)
    busy = PassResult({}, {}, single(State.PARTIAL, Kind.PARTIAL, "partial: 19 of 20 joined"))
    mark_outside_load(busy, limit * 3)
    assert busy.status.startswith("partial: 19 of 20 joined; measured under outside load")
    assert busy.state is State.PARTIAL and busy.outcome.has(Kind.OUTSIDE_LOAD)
    unknown = PassResult({}, {})
    mark_outside_load(unknown, None)
    assert unknown.metrics == {} and unknown.status == "ok"


def test_an_engine_daemon_that_ended_takes_nothing_away() -> None:
    """A removed container's shim ends between two samples: a plain sum of the live
    daemons dropped by all it had used (calibrate read -0.5 % of a core idle); by pid,
    only what each daemon alive at both used meanwhile counts, and a new one's all."""
    before = HostSample(0.0, 100.0, 40.0, testbed_s=1.0 + 30.0 + 2.0,
                        daemons={1: 30.0, 7: 2.0})
    after = HostSample(10.0, 101.0, 40.0, testbed_s=1.5 + 30.4 + 0.1,
                       daemons={1: 30.4, 9: 0.1})
    assert after.testbed_since(before) == pytest.approx(0.5 + 0.4 + 0.1)


def test_another_run_s_containers_are_outside_load() -> None:
    """A neighbour's stream runs in containers, which the engine's parent cgroup counts
    with the run's own: each container not the run's, up at both samples, adds what it
    used meanwhile back to the outside load (one that started or restarted meanwhile
    adds nothing: what it used in the pass is unknown)."""
    before = HostSample(0.0, 100.0, 40.0, testbed_s=5.0,
                        others={"neighbour": 7.0, "restarted": 9.0, "gone": 1.0})
    after = HostSample(10.0, 115.0, 48.0, testbed_s=6.0,
                       others={"neighbour": 12.0, "restarted": 0.5, "new": 3.0})
    assert after.others_since(before) == 5.0
    assert outside_cores(before, after) == pytest.approx(1.1)  # (15 - 8 - 1 + 5) / 10


def test_other_containers_are_read_from_the_cgroup_tree_less_the_run_s(
        tmp_path: Path) -> None:
    """cgroup v1 (cpuacct.usage, ns; this machine's) and v2 (cpu.stat's usage_usec,
    cgroupfs's or systemd's scopes);
    the run's own ids left out; a container gone while read gives nothing."""
    v1 = tmp_path / "v1" / "cpuacct" / "docker"
    for key, ns in (("ours", "4000000000"), ("theirs", "2500000000")):
        (v1 / key).mkdir(parents=True)
        (v1 / key / "cpuacct.usage").write_text(ns + "\n")
    (v1 / "gone").mkdir()
    assert others_seconds({"ours"}, tmp_path / "v1") == {"theirs": 2.5}
    v2 = tmp_path / "v2" / "docker" / "theirs"
    v2.mkdir(parents=True)
    (v2 / "cpu.stat").write_text("usage_usec 1500000\nuser_usec 1000000\n")
    scope = tmp_path / "v2" / "system.slice" / "docker-systemd.scope"  # systemd's driver
    scope.mkdir(parents=True)
    (scope / "cpu.stat").write_text("usage_usec 500000\n")
    assert others_seconds(set(), tmp_path / "v2") == {"theirs": 1.5, "systemd": 0.5}
    sample = host_sample({"ours"}, tmp_path / "v1")
    assert sample.others == {"theirs": 2.5} and host_sample(None, tmp_path / "v1").others == {}
