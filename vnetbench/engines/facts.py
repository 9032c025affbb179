"""What rendering needs to know of the engine, learned before rendering."""

from __future__ import annotations

from dataclasses import dataclass

START_INTERVAL_SINCE = 25  # Docker Engine that knows healthcheck.start_interval


@dataclass(frozen=True)
class EngineFacts:
    """What rendering needs to know of the engine, learned before rendering."""

    version: str | None = None  # None: not asked (a file to run by hand) or no engine

    @property
    def start_interval(self) -> bool:
        """Health checks only while starting; assumed when unknown (current engines)."""
        major = (self.version or "").split(".")[0]
        return not major.isdigit() or int(major) >= START_INTERVAL_SINCE
