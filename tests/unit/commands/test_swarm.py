"""swarm up's inputs, refused before the engine is asked."""

from __future__ import annotations

import pytest

from tests.unit.commands.refusals import refused


@pytest.mark.parametrize("nodes", ["1", "6", "-291", "1000000000000000000000000000000"])
def test_swarm_up_refuses_a_node_count_before_the_engine(
        nodes: str, monkeypatch: pytest.MonkeyPatch) -> None:
    said = refused(["swarm", "up", "--nodes", nodes], monkeypatch)
    assert f"A test swarm has 2 to 5 nodes, not {nodes}" in said
