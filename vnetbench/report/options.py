"""The choices of the history and export commands (light: the CLI imports them
before it knows which command runs)."""

from __future__ import annotations

from enum import StrEnum


class LabelFrom(StrEnum):
    """What names a results directory on the history page's x axis."""

    DATE = "date"  # run.json `started`
    VNET = "vnet"  # the vNet build: run.json images.vnet id, else overlays.vnet version
    TOOLS = "tools"  # the tools image id


class Order(StrEnum):
    DATE = "date"
    LABEL = "label"  # natural order: 'build 9' before 'build 10'


class ExportFormat(StrEnum):
    GITHUB = "github"  # github-action-benchmark's customBiggerIsBetter/customSmallerIsBetter
    BENCHER = "bencher"  # Bencher Metric Format (BMF)
