"""Where the project's non-Python parts live (templates, image contexts, topologies).

An installed wheel carries them in the package, under vnetbench/_data/ (see
pyproject.toml); a checkout (or an editable install of one) has them as
top-level folders next to the package. VNETBENCH_TEMPLATES and VNETBENCH_IMAGES
override either.
"""

import os
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]
PROJECT_ROOT = PACKAGE.parent  # the checkout, when running from one
DATA = PACKAGE / "_data"  # only in an installed wheel


def _located(name: str) -> Path:
    """The installed copy of a top-level folder if there is one, else the checkout's."""
    installed = DATA / name
    return installed if installed.is_dir() else PROJECT_ROOT / name


TEMPLATES = Path(os.environ.get("VNETBENCH_TEMPLATES") or _located("templates"))
IMAGES = Path(os.environ.get("VNETBENCH_IMAGES") or _located("images"))
TOPOLOGIES = _located("topologies")
