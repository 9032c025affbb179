"""Where the project's non-Python parts live (templates, image contexts)."""

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = Path(os.environ.get("VNETBENCH_TEMPLATES", PROJECT_ROOT / "templates"))
IMAGES = Path(os.environ.get("VNETBENCH_IMAGES", PROJECT_ROOT / "images"))
PACKAGE = Path(__file__).resolve().parent
