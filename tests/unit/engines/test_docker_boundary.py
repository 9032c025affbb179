"""The engine's own error at the boundary of engines/, and a tool specification turned
into the same client arguments the call sites gave before it was typed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from python_on_whales.exceptions import DockerException

from vnetbench.engines.base import EngineError, Mount, ToolSpec
from vnetbench.engines.compose import ComposeDeployment, ComposeEngine
from vnetbench.engines.docker import DockerEngine, interface_methods, run_options
from vnetbench.engines.swarm.deployment import SwarmDeployment
from vnetbench.engines.swarm.engine import SwarmEngine


class RefusingClient:
    """A client whose network listing fails the way the Docker CLI does."""

    def __init__(self) -> None:
        self.network = self

    def list(self, **options: Any) -> list[Any]:
        raise DockerException(["docker", "network", "ls"], 1, b"",
                              b"Cannot connect to the Docker daemon")


def test_a_client_failure_leaves_the_engine_as_its_own_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ComposeEngine, "hosts", lambda self: [("", RefusingClient())])
    with pytest.raises(EngineError) as raised:
        ComposeEngine().network_labels([])
    error = raised.value
    assert not isinstance(error, DockerException)
    assert (error.exit_code, error.stderr) == (1, "Cannot connect to the Docker daemon")
    assert "docker network ls" in str(error)  # the client's own account, kept
    assert isinstance(error.__cause__, DockerException)


@pytest.mark.parametrize("engine_class", [DockerEngine, ComposeEngine, SwarmEngine,
                                          ComposeDeployment, SwarmDeployment])
def test_every_interface_method_a_docker_class_defines_is_translated(
        engine_class: type) -> None:
    defined = interface_methods() & set(vars(engine_class))
    assert defined  # each class defines some of the interface
    bare = [name for name in defined
            if not hasattr(getattr(vars(engine_class)[name], "__func__",
                                   vars(engine_class)[name]), "__wrapped__")]
    assert bare == []


def test_the_interface_methods_are_found() -> None:
    assert {"run_tool", "start_tool", "run_helper", "start_helper", "containers", "up",
            "down", "for_topology", "system_facts"} <= interface_methods()
    assert "name" not in interface_methods()  # a class attribute, not a method


def test_a_tool_s_defaults_pass_only_its_removal() -> None:
    assert run_options(ToolSpec(("ping",), {})) == {"remove": True}


def test_a_shaper_spec_gives_the_arguments_it_was_started_with() -> None:
    shaper = ToolSpec(("/usr/local/bin/vnetbench-shape",), {}, name="agent1-shaper",
                      keep=True, capabilities=("NET_ADMIN", "NET_RAW"),
                      environment={"VNETBENCH_SHAPING": "{}"}, init=True)
    assert run_options(shaper) == {
        "remove": False, "name": "agent1-shaper", "cap_add": ["NET_ADMIN", "NET_RAW"],
        "envs": {"VNETBENCH_SHAPING": "{}"}, "init": True}


def test_a_helper_spec_gives_its_network_mounts_and_entrypoint() -> None:
    helper = ToolSpec(("sh", "-c", "ldd"), {}, image="base", entrypoint="",
                      network="none", security_options=("apparmor=unconfined",),
                      mounts=(Mount(Path("/tmp/programs"), "/programs"),))
    assert run_options(helper) == {
        "remove": True, "entrypoint": "", "networks": ["none"],
        "security_options": ["apparmor=unconfined"],
        "volumes": [(Path("/tmp/programs"), "/programs", "ro")]}


def test_a_generator_that_enters_other_namespaces_sees_the_host_s_pids() -> None:
    generator = ToolSpec(("vnetbench-room", "many"), {}, host_pids=True,
                         capabilities=("SYS_ADMIN", "SYS_PTRACE"),
                         security_options=("apparmor=unconfined",), cpu_shares=262144)
    assert run_options(generator) == {
        "remove": True, "pid": "host", "cap_add": ["SYS_ADMIN", "SYS_PTRACE"],
        "security_options": ["apparmor=unconfined"], "cpu_shares": 262144}
