"""Teardown's removal of a run's networks and the sweep of its fabric rules, on fake
clients: the networks go in one call, each one left goes on its own as before, and
the sweep runs beside the networks' removal."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import pytest
from python_on_whales.exceptions import DockerException

from vnetbench.engines import docker as docker_module
from vnetbench.engines import fabric
from vnetbench.engines.compose import ComposeEngine
from vnetbench.engines.docker import REMOVERS, removal_calls, remove_networks

HANG_GUARD_S = 60.0  # a wait that would block for ever if the code were serial


@dataclass
class Network:
    id: str


@dataclass
class Networks:
    """`docker network` of a fake engine: its networks; `in_use` refuse their removal
    once; every removal call recorded."""

    ids: list[str]
    in_use: set[str] = field(default_factory=set)
    calls: list[list[str]] = field(default_factory=list)
    before_remove: Any = None

    def list(self, filters: object = ()) -> list[Network]:
        return [Network(i) for i in self.ids]

    def remove(self, networks: str | list[str]) -> None:
        if self.before_remove is not None:
            self.before_remove()
        asked = [networks] if isinstance(networks, str) else list(networks)
        self.calls.append(asked)
        refused = [n for n in asked if n in self.in_use]
        self.ids = [n for n in self.ids if n not in asked or n in refused]
        self.in_use -= set(refused)
        if refused:
            raise DockerException(["docker", "network", "rm", *asked], 1,
                                  stderr=b"network is in use")


class Client:
    def __init__(self, networks: Networks) -> None:
        self.network = networks
        self.volume = self

    def list(self, filters: object = ()) -> list[Any]:  # volumes: none
        return []


@pytest.fixture(autouse=True)
def no_sleep(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(docker_module.time, "sleep", lambda _: None)


def test_every_network_of_the_run_goes_in_one_call() -> None:
    networks = Networks(["n1", "n2", "n3"])
    assert remove_networks(["n1", "n2", "n3"], "r1", Client(networks)) == 3  # type: ignore[arg-type]
    assert networks.calls == [["n1", "n2", "n3"]]
    assert networks.ids == []
    assert remove_networks([], "r1", Client(networks)) == 0  # type: ignore[arg-type]
    assert networks.calls == [["n1", "n2", "n3"]]  # no call for none


def test_a_network_still_in_use_goes_on_its_own_after_the_others() -> None:
    networks = Networks(["n1", "n2", "n3"], in_use={"n2"})
    assert remove_networks(["n1", "n2", "n3"], "r1", Client(networks)) == 3  # type: ignore[arg-type]
    # the batch removed n1 and n3; n2 was tried again alone (remove_network)
    assert networks.calls[0] == ["n1", "n2", "n3"]
    assert networks.calls[1:] == [["n2"]]
    assert networks.ids == []


def test_the_fabric_sweep_runs_beside_the_networks_removal(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The networks' removal waits until the sweep has begun: run one after the other,
    the wait would end at the hang guard and the removal would say so."""
    swept = threading.Event()
    overlapped: list[bool] = []

    def sweep(hosts: object, run_id: str | None) -> int:
        swept.set()
        return 2

    networks = Networks(["n1"], before_remove=lambda: overlapped.append(
        swept.wait(HANG_GUARD_S)))
    client = Client(networks)

    class Engine(ComposeEngine):
        def hosts(self) -> list[tuple[str, Any]]:
            return [("", client)]

    monkeypatch.setattr(docker_module, "remove_containers", lambda *args, **kwargs: None)
    monkeypatch.setattr(fabric, "remove_fabric_rules", sweep)
    removed = Engine().remove_run("r1")
    assert overlapped == [True]
    assert removed.networks == 1 and removed.rules == 2


def test_removal_calls_deal_each_host_s_names_to_at_most_removers_calls() -> None:
    names = [f"p{n}" for n in range(10)]
    calls = removal_calls({"": names, "node-b": ["q1"]})
    assert [where for where, _ in calls] == ["", "", "", "", "node-b"]
    assert len(calls) == REMOVERS + 1
    assert sorted(n for _, chunk in calls[:REMOVERS] for n in chunk) == sorted(names)
    assert calls[-1] == ("node-b", ["q1"])
    assert removal_calls({"": ["only"]}) == [("", ["only"])]  # one probe: one call


def test_a_pass_s_probes_go_in_a_few_calls_and_one_gone_already_is_fine() -> None:
    calls: list[tuple[list[str], dict[str, Any]]] = []

    class Containers:
        def remove(self, names: list[str], **options: Any) -> None:
            calls.append((list(names), options))
            if "gone" in names:  # the CLI removes the others and exits 1
                raise DockerException(["docker", "rm", "-f", *names], 1,
                                      stderr=b"No such container: gone")

    class Engine(ComposeEngine):
        def client_at(self, where: str, quick: bool = False) -> Any:
            return type("Client", (), {"container": Containers()})()

    names = ["gone", *(f"p{n}" for n in range(49))]
    Engine().remove_all(names)
    assert len(calls) == REMOVERS  # 50 probes: 4 calls, not 50
    assert sorted(n for chunk, _ in calls for n in chunk) == sorted(names)
    assert all(options == {"force": True} for _, options in calls)


def test_the_fabric_is_stopped_beside_the_others_removal_then_removed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The fabric helper gets its SIGTERM (its rule goes with it) and is removed only
    after; the run's other containers are removed meanwhile: its stop waits until their
    removal has begun, which one after the other could not."""
    from vnetbench.engines.base import Listed, Removed
    from vnetbench.engines.docker import remove_containers
    from vnetbench.runtime import labels

    listed = [Listed("f", "p-fabric", "exited", None, {labels.ROLE: "fabric"}),
              *(Listed(f"a{n}", f"p-a{n}", "running", None, {labels.ROLE: "agent"})
                for n in range(6))]
    others_began = threading.Event()
    events: list[tuple[str, list[str]]] = []

    class Containers:
        def stop(self, ids: list[str], time: int) -> None:
            events.append(("stop", list(ids)))
            assert others_began.wait(HANG_GUARD_S), "the others waited for the stop"

        def remove(self, ids: list[str], **options: Any) -> None:
            if "f" not in ids:
                others_began.set()
            events.append(("remove", list(ids)))

    client = type("Client", (), {"container": Containers()})()
    listings = [listed, []]
    monkeypatch.setattr(docker_module, "listed_on", lambda *args: listings.pop(0))
    removed = Removed()
    remove_containers("r1", client, removed)  # type: ignore[arg-type]
    assert removed.containers == 7
    fabric = [event for event in events if "f" in event[1]]
    assert fabric == [("stop", ["f"]), ("remove", ["f"])]  # stopped, then removed alone
    assert sorted(i for kind, ids in events if kind == "remove" and "f" not in ids
                  for i in ids) == [f"a{n}" for n in range(6)]



def test_many_names_go_in_calls_of_at_most_a_chunk() -> None:
    """A 1000-machine room's 2,026 containers in four calls ran past each call's bound
    and left 1,781 behind (2026-12-07): calls stay at REMOVAL_CHUNK names."""
    from vnetbench.engines.docker import REMOVAL_CHUNK

    names = [f"c{n}" for n in range(2026)]
    calls = removal_calls({"": names})
    assert all(len(chunk) <= REMOVAL_CHUNK for _, chunk in calls)
    assert sorted(n for _, chunk in calls for n in chunk) == sorted(names)
    assert len(calls) == -(-2026 // REMOVAL_CHUNK)


def test_what_a_call_left_is_removed_again_while_each_round_removes_some(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A call that ran past its bound (the CLI killed, its names half removed) is not
    the end of the teardown: the rest go in further rounds; one that removes nothing
    stops them, and what is left is said, not counted."""
    from vnetbench.engines.base import Listed, Removed
    from vnetbench.engines.docker import remove_containers

    present = {f"a{n}" for n in range(10)}
    stubborn = {"a9"}  # never goes
    attempts: list[int] = []

    class Containers:
        def remove(self, ids: list[str], **options: Any) -> None:
            attempts.append(len(ids))
            # each call removes only its first name (the rest: past its bound)
            gone = [i for i in ids if i not in stubborn][:1]
            present.difference_update(gone)

    def listed(*args: object) -> list[Listed]:
        return [Listed(i, f"p-{i}", "running", None, {}) for i in sorted(present)]

    client = type("Client", (), {"container": Containers()})()
    monkeypatch.setattr(docker_module, "listed_on", listed)
    removed = Removed()
    remove_containers("r1", client, removed)  # type: ignore[arg-type]
    assert present == stubborn
    assert removed.containers == 9
