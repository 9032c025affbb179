"""The refusal of an input that is wrong whatever the engine says, before it is asked
or any work is done (issue #61; each found by tests/unit/test_cli_fuzz.py): exit 2,
one paragraph, and neither require_engine nor any process reached."""

from __future__ import annotations

import subprocess

import pytest
from typer.testing import CliRunner

import vnetbench.engines as engines
from vnetbench.cli import app

runner = CliRunner()


class Asked(BaseException):
    """The engine was asked."""


def refused(args: list[str], monkeypatch: pytest.MonkeyPatch) -> str:
    """The paragraph a refusal prints, the engine never asked; whitespace folded."""
    def ask(*_args: object, **_kwargs: object) -> None:
        raise Asked(" ".join(args))

    monkeypatch.setattr(engines, "require_engine", ask)
    monkeypatch.setattr(subprocess.Popen, "__init__", ask)
    result = runner.invoke(app, args, env={"DOCKER_HOST": "unix:///nonexistent"})
    assert isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: ") and "\n\n" not in result.output.strip()
    return " ".join(result.output.split())
