"""The one bring-up: another block when the engine refuses one, and everything of a
stack removed (keys too) however its bring-up ends."""

from __future__ import annotations

from ipaddress import IPv4Network
from pathlib import Path
from typing import Any

import pytest

from vnetbench.deploy import lifecycle
from vnetbench.deploy.lifecycle import Prepared, StackSpec
from vnetbench.engines.base import Removed
from vnetbench.errors import BlockTaken
from vnetbench.model.topology import parse_topology
from vnetbench.overlays.baseline import Baseline
from vnetbench.runtime.images import ImageSet

BLOCKS = [IPv4Network(f"10.{n}.0.0/16") for n in (160, 161, 162, 163)]


class Claim:
    """A block claim that hands out the next block when one is replaced."""

    def __init__(self) -> None:
        self.blocks = list(BLOCKS)
        self.block = self.blocks.pop(0)
        self.refused: list[IPv4Network] = []

    def replace(self) -> IPv4Network:
        self.refused.append(self.block)
        self.block = self.blocks.pop(0)
        return self.block


class RefusingEngine:
    """An engine whose deployments refuse the first `refusals` blocks."""

    name = "fake"

    def __init__(self, refusals: int) -> None:
        self.refusals, self.ups, self.downs = refusals, [], 0

    def adjust(self, topology: Any) -> Any:
        return topology

    def deployment(self, rendered: Any, topology: Any) -> Any:
        engine = self

        class Deployment:
            def up(self, timeout_s: int, unready: Any) -> list[str]:
                engine.ups.append(rendered.plan.block)
                if len(engine.ups) <= engine.refusals:
                    raise BlockTaken(rendered.plan.block, "Pool overlaps")
                return []

            def down(self) -> Removed:
                engine.downs += 1
                return Removed()

        return Deployment()

    def containers(self, filters: Any) -> list[Any]:
        return []

    def project_logs(self, project: str, containers: Any) -> dict[str, str]:
        return {}


def spec(tmp_path: Path, engine: RefusingEngine, moved: list[Any]) -> StackSpec:
    topology = parse_topology({"name": "t", "switches": 2, "agents": 2}, "t.yml")
    prepared = Prepared(topology, Baseline(), engine, ImageSet())  # type: ignore[arg-type]
    return StackSpec(prepared, "t-1", tmp_path, "owner",
                     block_moved=lambda refused, claimed: moved.append((refused, claimed)))


def test_a_refused_block_is_given_up_for_another(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lifecycle, "shape_run", lambda stack, topology: {})
    engine, moved = RefusingEngine(refusals=2), []
    stack = lifecycle.start(spec(tmp_path, engine, moved), Claim())  # type: ignore[arg-type]
    assert engine.ups == BLOCKS[:3] and engine.downs == 2  # each refused stack removed
    assert moved == [(BLOCKS[0], BLOCKS[1]), (BLOCKS[1], BLOCKS[2])]
    assert stack.rendered.plan.block == BLOCKS[2]


def test_refused_every_time_the_run_ends_with_the_engine_s_words(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lifecycle, "shape_run", lambda stack, topology: {})
    engine = RefusingEngine(refusals=lifecycle.BLOCK_ATTEMPTS)
    with pytest.raises(BlockTaken, match="Pool overlaps"):
        lifecycle.start(spec(tmp_path, engine, []), Claim())  # type: ignore[arg-type]
    assert len(engine.ups) == lifecycle.BLOCK_ATTEMPTS == engine.downs
    assert (tmp_path / "logs").is_dir()  # given up, it was stopped as any failure is
