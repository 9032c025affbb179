"""What every command pays before it starts (commands/common.py: guarded catches
EngineError only once the engines are loaded): the CLI's definition loads neither the
engines (the Docker clients) nor pandas, which took 0.9 s and 0.5 s of each start,
`--help`, `--version` and a shell's completion included; a command loads them when it
runs. Checked by the modules loaded, not by a time (this host's speed varies)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("vnetbench.engines", "python_on_whales", "docker", "pandas")


def loaded_by(code: str) -> set[str]:
    done = subprocess.run([sys.executable, "-c", code + "\nimport sys, json\n"
                           "print(json.dumps(sorted(sys.modules)))"],
                          capture_output=True, text=True, timeout=120, check=True)
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def test_the_cli_s_definition_loads_no_engine_and_no_pandas() -> None:
    loaded = loaded_by("import vnetbench.cli")
    assert not [name for name in HEAVY if name in loaded]


@pytest.mark.parametrize("argv", [["--version"], ["run", "--help"], ["validate", "--help"]])
def test_a_command_that_asks_no_engine_starts_without_one(argv: list[str]) -> None:
    code = ("import sys\nfrom vnetbench.cli import app\nsys.argv = ['vnetbench', "
            f"*{argv!r}]\ntry:\n    app()\nexcept SystemExit:\n    pass")
    loaded = loaded_by(code)
    assert not [name for name in HEAVY if name in loaded]


def test_an_engine_error_is_still_the_environment_s_once_the_engines_are_loaded() -> None:
    from vnetbench.commands.common import engine_errors
    from vnetbench.engines.base import EngineError

    assert engine_errors() == (EngineError,)
