"""The scenario interface: one pass of a measurement on a running stack."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path

from vnetbench.addressing import AddressPlan
from vnetbench.overlays import Overlay
from vnetbench.stack import Stack
from vnetbench.topology import Topology

Metrics = dict[str, tuple[float | None, str]]


@dataclass(frozen=True)
class ScenarioContext:
    stack: Stack
    topology: Topology
    overlay: Overlay
    plan: AddressPlan
    raw_dir: Path  # raw tool output of this scenario goes here


@dataclass
class PassResult:
    metrics: Metrics
    summary: dict[str, float | int | str | None]  # fields of the RESULT line
    status: str = "ok"  # or why there are no numbers, e.g. "path dead: ..."
    notes: list[str] = field(default_factory=list)


class Scenario(ABC):
    name: str
    description: str

    def check(self, topology: Topology) -> None:  # noqa: B027 (optional hook)
        """Raise UserError before anything starts if the topology cannot host this."""

    @abstractmethod
    def run_pass(self, context: ScenarioContext, pass_no: int) -> PassResult:
        """Measure once; never hang (every wait is bounded)."""

    def matrix_variants(self) -> dict[str, dict[str, object]]:
        """Settings variants the matrix runs (the seed's settings)."""
        return {"default": {}}

    def settings(self, topology: Topology) -> dict[str, object]:
        """The settings that shaped this scenario's numbers (result columns)."""
        return {}
