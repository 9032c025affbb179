"""Memory from cgroup files: recorded v1 files (and v2 ones in the kernel's format)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vnetbench.engines.usage import MemoryReading, memory_reading, v1_reading, v2_reading
from vnetbench.measure.memory import MIB, RoleMemory, by_role

RECORDED = "dd4ede2b058b"  # the recorded container's id (its directory's name)


def test_v1_current_is_what_docker_stats_showed(data_dir: Path) -> None:
    """Usage less total_inactive_file: 64 MiB of page cache it wrote and read back is
    left out, the 2.68 MiB docker stats showed at the same moment remain."""
    reading = memory_reading(RECORDED, data_dir / "memory" / "v1")
    assert reading is not None
    shown = (data_dir / "memory" / "v1" / "docker-stats.txt").read_text().split("MiB")[0]
    assert round(reading.current_bytes / MIB, 2) == float(shown)
    assert reading.peak_bytes == 70926336  # max_usage_in_bytes: the page cache is in it
    assert reading.peak_bytes >= reading.current_bytes


def test_v2_current_less_inactive_file_and_its_peak(data_dir: Path) -> None:
    """memory.current (anon + file + kernel) less inactive_file; memory.peak as it is."""
    reading = memory_reading(RECORDED, data_dir / "memory" / "v2")
    assert reading == MemoryReading(67964928 - 67108864, 71303168)


def test_no_cgroup_found_gives_none(tmp_path: Path) -> None:
    assert memory_reading(RECORDED, tmp_path) is None


def test_parsers_keep_usage_when_the_cache_figure_exceeds_it() -> None:
    """docker stats' rule: an inactive_file not below the usage is not subtracted."""
    assert v1_reading("100\n", "300\n", "inactive_file 40\n") == MemoryReading(60, 300)
    assert v1_reading("100", "300", "total_inactive_file 500\n") == MemoryReading(100, 300)
    assert v2_reading("100", None, "anon 60\ninactive_file 30\n") == MemoryReading(70, None)


def test_roles_aggregate_sum_mean_and_highest_peak() -> None:
    readings = {"switch": [MemoryReading(10 * MIB, 30 * MIB), MemoryReading(20 * MIB, None)],
                "agent": []}
    assert by_role(readings) == {"switch": RoleMemory(2, 30 * MIB, 15 * MIB, 30 * MIB)}
    assert RoleMemory.of([MemoryReading(5, None)]).max_peak_bytes is None


@pytest.mark.parametrize("name", ["memory.current", "memory.stat"])
def test_a_file_gone_midway_gives_none(data_dir: Path, tmp_path: Path, name: str) -> None:
    """A container that ends while it is read: no reading, not an error."""
    scope = tmp_path / "docker" / RECORDED
    scope.mkdir(parents=True)
    (scope / "memory.current").write_text("100\n")
    (scope / "memory.stat").write_text("inactive_file 10\n")
    assert memory_reading(RECORDED, tmp_path) == MemoryReading(90, None)
    (scope / name).unlink()
    assert memory_reading(RECORDED, tmp_path) is None
