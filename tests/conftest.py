from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
SHARED = Path(__file__).resolve().parents[2] / "shared"


@pytest.fixture
def data_dir() -> Path:
    return DATA
