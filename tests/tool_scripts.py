"""The tools image's scripts (images/tools/, Python without a .py suffix), imported as
modules so unit tests drive their functions on this machine."""

from __future__ import annotations

import importlib.machinery
import importlib.util
from pathlib import Path
from types import ModuleType

TOOLS = Path(__file__).resolve().parents[1] / "images" / "tools"


def load_tool(name: str) -> ModuleType:
    """images/tools/NAME as a module of its own (NAME's dashes as underscores)."""
    loader = importlib.machinery.SourceFileLoader(name.replace("-", "_") + "_script",
                                                  str(TOOLS / name))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module
