"""Ownership decided by labels and records only: an owner is judged gone only when
it is a process of this host and this PID namespace that no longer runs; run ids
that cannot meet; no object created without its run and owner labels."""

from __future__ import annotations

import ast
import socket
from datetime import UTC, datetime
from pathlib import Path

import pytest

import vnetbench
from vnetbench.engines.base import ToolSpec
from vnetbench.engines.compose import ComposeEngine
from vnetbench.engines.docker import DockerEngine
from vnetbench.runtime import labels, rundir
from vnetbench.runtime.labels import (
    Liveness,
    UnlabelledObject,
    current_owner,
    helper_labels,
    owner_gone,
    owner_liveness,
    pid_namespace,
    run_labels,
)

HOST = socket.gethostname()
OTHER_NAMESPACE = "4026531999" if pid_namespace() != "4026531999" else "4026532000"


def test_the_owner_records_this_process_s_pid_namespace() -> None:
    host, _pid, _start, namespace = current_owner().split(":")
    assert (host, namespace) == (HOST, pid_namespace()) and namespace.isdigit()
    assert owner_liveness(current_owner()) is Liveness.ALIVE


def test_pid_1_of_another_pid_namespace_is_never_judged_gone() -> None:
    """The issue's case: vnetbench in a container sharing the host's name runs as pid 1
    there; pid 1 here is another process (other start time), yet the owner is alive."""
    in_container = f"{HOST}:1:12345:{OTHER_NAMESPACE}"
    assert owner_liveness(in_container) is Liveness.UNPROVABLE
    assert not owner_gone(in_container)
    assert not labels.all_gone({in_container})
    assert labels.unprovable({in_container, None})


def test_an_ended_process_of_this_namespace_is_gone_in_both_label_forms() -> None:
    assert owner_gone(f"{HOST}:999999999:1:{pid_namespace()}")
    assert owner_gone(f"{HOST}:999999999:1")  # a label of before the namespace was kept
    assert not owner_gone(f"elsewhere:999999999:1:{pid_namespace()}")  # another host
    assert not labels.unprovable({f"{HOST}:999999999:1:{pid_namespace()}"})


def test_two_thousand_runs_started_in_one_second_all_have_their_own_id(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rundir, "stamp", lambda now=None: "20260101-000000")
    ids = {rundir.new_run_id("t") for _ in range(2000)}
    assert len(ids) == 2000
    random_part = next(iter(ids)).rsplit("-", 1)[1]
    assert len(random_part) * 4 >= 64  # hex digits: 64 random bits at least
    assert rundir.stamp(datetime(2026, 1, 1, tzinfo=UTC)) == "20260101-000000"


def test_a_helper_carries_a_run_and_an_owner_of_its_own() -> None:
    first, second = helper_labels("capability-probe", "local"), helper_labels("x", "local")
    assert labels.owned(first) and first[labels.OWNER] == current_owner()
    assert first[labels.RUN].startswith(labels.HELPER_PREFIX)
    assert first[labels.RUN] != second[labels.RUN]


class Recorder:
    def __init__(self) -> None:
        self.calls: list[dict[str, object]] = []

    def run(self, *args: object, **options: object) -> str:
        self.calls.append(options)
        return "out"


def test_the_engine_refuses_to_create_an_unlabelled_container(
        monkeypatch: pytest.MonkeyPatch) -> None:
    recorder = Recorder()
    monkeypatch.setattr("vnetbench.engines.compose.docker", recorder)
    with pytest.raises(UnlabelledObject, match=labels.OWNER):
        ComposeEngine().run_helper(ToolSpec(("true",), {labels.ROLE: "probe"}, image="image"))
    with pytest.raises(UnlabelledObject):
        ComposeEngine().start_helper(ToolSpec(("true",), {}, image="image"))
    assert recorder.calls == []  # refused before the engine was asked
    ComposeEngine().run_helper(ToolSpec(("true",), helper_labels("probe", "local"),
                                        image="image"))
    assert labels.owned(recorder.calls[0]["labels"])  # type: ignore[arg-type]


def test_a_tool_in_a_namespace_is_refused_without_run_and_owner(
        monkeypatch: pytest.MonkeyPatch) -> None:
    engine = ComposeEngine()
    recorder = Recorder()
    monkeypatch.setattr(DockerEngine, "client_for", lambda self, target, quick=False: recorder)
    monkeypatch.setattr(DockerEngine, "placed_beside", lambda self, name, target: None)
    with pytest.raises(UnlabelledObject):
        engine.run_tool("agent-1", ToolSpec(("ping",), {labels.RUN: "r"}))
    with pytest.raises(UnlabelledObject):
        engine.start_tool("agent-1", ToolSpec(("iperf3", "-s"), {labels.OWNER: "o"},
                                              name="probe"))
    assert recorder.calls == []
    engine.start_tool("agent-1", ToolSpec(("iperf3", "-s"), run_labels("r", "probe", "a"),
                                          name="probe"))
    assert labels.owned(recorder.calls[0]["labels"])  # type: ignore[arg-type]


# Every place vnetbench creates a container, network or volume, found in its source:
# (function or method called, index of its labels argument when given by position).
# A helper or tool is specified by a ToolSpec (engines/base.py) before an engine's
# run_tool, start_tool, run_helper or start_helper starts it: the spec carries the labels.
CREATING_CALLS = {"ToolSpec": 1}
CLIENT_CREATES = {"run", "create"}  # client.run(IMAGE, ...), .network/.volume.create(...)
# A test swarm node: not a run's object (clean must not sweep it as one); it carries
# the test swarm's label and an owner (testbed.test_swarm_labels), checked below.
IMAGES_CREATED_FROM = {"TOOLS_IMAGE", "NODE_IMAGE"}


def creation_sites() -> list[tuple[str, int, ast.Call]]:
    sites = []
    for path in sorted(Path(vnetbench.__file__).parent.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute | ast.Name):
                sites.append((str(path), node.lineno, node))
    return sites


def called(call: ast.Call) -> str:
    return call.func.id if isinstance(call.func, ast.Name) else call.func.attr  # type: ignore[attr-defined]


def is_creation(call: ast.Call) -> bool:
    attribute = called(call)
    if attribute in CREATING_CALLS:
        return True
    if isinstance(call.func, ast.Name):
        return False
    receiver = call.func.value  # type: ignore[attr-defined]
    if attribute == "create" and isinstance(receiver, ast.Attribute):
        return receiver.attr in ("network", "volume")
    first = call.args[0] if call.args else None
    return (attribute == "run" and isinstance(first, ast.Name)
            and first.id in IMAGES_CREATED_FROM)


def labels_given(call: ast.Call) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == "labels":
            return keyword.value
    index = CREATING_CALLS.get(called(call))
    return call.args[index] if index is not None and len(call.args) > index else None


def test_every_creation_site_in_the_source_passes_labels() -> None:
    found = [(path, line, call) for path, line, call in creation_sites() if is_creation(call)]
    assert len(found) >= 15  # the enumeration sees the sites (probes, helpers, nodes...)
    unlabelled = [f"{path}:{line}" for path, line, call in found
                  if labels_given(call) is None
                  and not path.endswith(("engines/compose.py", "engines/docker.py"))]
    assert unlabelled == [], "these create an object without labels"
    # the dict literals given are never a role alone: they come from run_labels,
    # helper_labels or the test swarm's own labels
    literal = [f"{path}:{line}" for path, line, call in found
               if isinstance(labels_given(call), ast.Dict)]
    assert literal == []


def test_the_test_swarm_s_objects_carry_its_label_and_an_owner() -> None:
    from vnetbench.engines.swarm.cluster import TEST_SWARM_LABEL
    from vnetbench.engines.swarm.testbed import test_swarm_labels

    given = test_swarm_labels("volume")
    assert given[TEST_SWARM_LABEL] == "volume"
    assert owner_liveness(given[labels.OWNER]) is Liveness.DETACHED
