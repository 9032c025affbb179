"""pytest fixtures for testing an overlay on vnetbench topologies (entry point pytest11).

    def test_two_sites(vnetbench_topology):
        net = vnetbench_topology("two-sites.yml", overlay="baseline")
        assert net.ping("agent1", "agent2").received == 10
        net.shape("backbone", delay="20ms")
        net.kill("switch2")

`vnetbench_topology` is a factory whose topologies live for one test;
`vnetbench_module_topology` and `vnetbench_session_topology` share theirs with
the module or the session. `vnet_topology` is the two-site topology on vNet,
skipped where no vNet images are present. Each topology claims its own address
block under an inter-process lock, so pytest-xdist workers never collide; its
files (compose.yml, logs, raw output) go under pytest's temporary directory.
No Ryuk: teardown removes everything with the run's label, however the test ends.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:  # imported when a fixture is used: every pytest session loads this
    from vnetbench.deploy.testing import RunningTopology

TopologyFactory = Callable[..., "RunningTopology"]


def _factory(stack: ExitStack, tmp_path_factory: pytest.TempPathFactory) -> TopologyFactory:
    def bring_up(source: str | Path | Mapping[str, Any] = "two-sites.yml",
                 overlay: str | None = None,
                 links: Mapping[str, Mapping[str, Any]] | None = None,
                 skip_if_unavailable: bool = False) -> RunningTopology:
        from vnetbench.deploy.testing import running_topology
        from vnetbench.errors import OverlayUnavailable

        directory = tmp_path_factory.mktemp("vnetbench-run")
        try:
            return stack.enter_context(running_topology(source, directory, overlay, links))
        except OverlayUnavailable as missing:
            if skip_if_unavailable:
                pytest.skip(str(missing))
            raise
    return bring_up


@pytest.fixture
def vnetbench_topology(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TopologyFactory]:
    """Bring up topologies that are torn down when the test ends."""
    with ExitStack() as stack:
        yield _factory(stack, tmp_path_factory)


@pytest.fixture(scope="module")
def vnetbench_module_topology(tmp_path_factory: pytest.TempPathFactory
                              ) -> Iterator[TopologyFactory]:
    """Topologies shared by the tests of one module (torn down after its last test)."""
    with ExitStack() as stack:
        yield _factory(stack, tmp_path_factory)


@pytest.fixture(scope="session")
def vnetbench_session_topology(tmp_path_factory: pytest.TempPathFactory
                               ) -> Iterator[TopologyFactory]:
    """Topologies shared by the whole session."""
    with ExitStack() as stack:
        yield _factory(stack, tmp_path_factory)


@pytest.fixture
def vnet_topology(vnetbench_topology: TopologyFactory) -> RunningTopology:
    """Two sites on vNet (images vnet-conductor/switch/agent or VNETBENCH_VNET_IMAGES);
    the test is skipped where vNet is not present."""
    return vnetbench_topology("two-sites.yml", overlay="vnet", skip_if_unavailable=True)
