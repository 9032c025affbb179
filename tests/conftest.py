import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
SHARED = Path(__file__).resolve().parents[2] / "shared"


@pytest.fixture
def data_dir() -> Path:
    return DATA


@pytest.fixture
def data_copy(tmp_path: Path) -> Callable[[str], Path]:
    """A fresh copy of a recorded directory under tests/data, for a test to change."""
    def copy(name: str) -> Path:
        return Path(shutil.copytree(DATA / name, tmp_path / name))
    return copy
