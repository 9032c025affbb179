"""What every overlay adapter provides: the one interface the rest codes against.

An adapter is a small class plus its template folder
`templates/overlays/<name>/services.yml.j2`. Nothing outside the adapter and
its templates knows an overlay by name.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

from vnetbench.addressing import AddressPlan
from vnetbench.topology import Topology


class Overlay(ABC):
    name: str
    summary: str
    data_path: str  # the hops a packet between two sites takes

    @abstractmethod
    def target_address(self, topology: Topology, plan: AddressPlan, agent: str) -> str:
        """The address other agents reach this agent at, through the overlay."""

    def template_context(self, topology: Topology, plan: AddressPlan) -> dict[str, Any]:
        """Extra variables for this overlay's templates."""
        return {}

    def write_files(self, topology: Topology, plan: AddressPlan, run_dir: Path) -> list[Path]:
        """Config, keys and certificates the containers mount; none by default."""
        return []

    def supports(self, scenario: str) -> str | None:
        """None if the scenario applies, else the reason it does not."""
        return None

    def unavailable_reason(self) -> str | None:
        """None if this overlay can run here, else what is missing (e.g. images)."""
        return None

    def version(self) -> str:
        """The overlay's version, for the results header."""
        return "unknown"

    def matrix_variants(self, scenario: str) -> dict[str, dict[str, Any]]:
        """Settings variants of this overlay the matrix runs for a scenario."""
        return {"default": {}}
