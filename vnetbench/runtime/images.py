"""The project's own images by name: an offline-capable Debian 13 base, `tools`
(every helper and probe) and `overlays` (engines/build.py builds them)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

OFFICIAL_BASE = "debian:trixie-slim"
BOOTSTRAPPED_BASE = "vnetbench/base:trixie"
TOOLS_IMAGE = "vnetbench/tools:trixie"
OVERLAYS_IMAGE = "vnetbench/overlays:trixie"


@dataclass(frozen=True)
class ImageSet:
    """Image names a rendered topology refers to."""

    tools: str = TOOLS_IMAGE
    overlays: str = OVERLAYS_IMAGE  # WireGuard, OpenVPN from Debian packages


def context_digest(path: Path) -> str:
    """A digest of a build context's files: an image built from other files is stale."""
    digest = hashlib.sha256()
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        digest.update(str(file.relative_to(path)).encode() + b"\0" + file.read_bytes())
    return digest.hexdigest()[:16]
