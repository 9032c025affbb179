"""The command line's layout: cli.py only registers, each verb has its module under
vnetbench/commands/, and `run` has an option per Settings field, generated."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from vnetbench.cli import app
from vnetbench.commands.options import settings_given
from vnetbench.model.topology import setting_fields
from vnetbench.scenarios import SCENARIOS

PACKAGE = Path(__file__).resolve().parents[3] / "vnetbench"
# commands/ modules that register no command (root: the root's own options; documents:
# the result documents --json prints)
SHARED = {"__init__", "common", "documents", "options", "root"}
COMMANDS = ["validate", "render", "run", "methods", "sweep", "capacity", "cost", "shape", "matrix",
            "report", "history", "export", "compare", "ab", "up", "down", "calibrate", "clean",
            "doctor", "version", "completion", "images build", "images vnet", "swarm up",
            "swarm down"]

runner = CliRunner()


def registered(typer_app: typer.Typer, prefix: str = "") -> dict[str, str]:
    """Command name -> the module of its function, sub-apps' commands as 'group verb'."""
    found = {prefix + (c.name or c.callback.__name__): c.callback.__module__
             for c in typer_app.registered_commands if c.callback}
    for group in typer_app.registered_groups:
        assert group.typer_instance is not None
        found |= registered(group.typer_instance, f"{prefix}{group.name} ")
    return found


def test_cli_py_defines_nothing_but_the_app_and_its_registrations() -> None:
    tree = ast.parse((PACKAGE / "cli.py").read_text())
    logic = [type(node).__name__ for node in ast.walk(tree)
             if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
                           | ast.Lambda | ast.If | ast.While | ast.With | ast.Try)]
    assert logic == [], f"cli.py holds logic ({logic}): it goes in vnetbench/commands/"
    allowed = ast.Import | ast.ImportFrom | ast.Assign | ast.Expr | ast.For
    assert all(isinstance(node, allowed) for node in tree.body)


def test_every_command_module_registers_a_command_and_every_verb_is_there() -> None:
    commands = registered(app)
    assert list(commands) == COMMANDS
    modules = {path.stem for path in (PACKAGE / "commands").glob("*.py")} - SHARED
    assert set(commands.values()) == {f"vnetbench.commands.{name}" for name in modules}


def test_run_has_an_option_per_setting_with_its_description_as_help() -> None:
    run = typer.main.get_command(app).commands["run"]  # type: ignore[attr-defined]
    options = {param.name: param for param in run.params}
    missing = set(setting_fields()) - set(options)
    assert not missing, f"settings without a run option: {missing}"
    assert {"room_rate", "rr_parallel", "join_wait_s"} <= set(options)  # a scenario's own
    for name, field in setting_fields().items():
        assert field.description, f"Settings.{name} has no description (its option's help)"
        assert options[name].help == field.description
    assert options["encryption"].opts == ["--no-encryption"]  # its off switch only
    assert options["ping_interval_ms"].opts == ["--ping-interval-ms"]


def test_settings_given_are_the_overrides_and_only_those() -> None:
    given = settings_given({name: None for name in setting_fields()}
                           | {"encryption": True, "ping_sizes": "100,500", "reverse": False,
                              "join_fresh": "containers", "transfer_bytes": "1MiB"})
    assert given == {"reverse": False, "encryption": False, "join_fresh": "containers",
                     "ping_sizes": (100, 500), "transfer_bytes": "1MiB"}
    assert settings_given({"encryption": False}) == {}  # --no-encryption not given


@pytest.mark.parametrize(("args", "expected"), [
    (["--pings", "0"], "--pings (settings.pings)"),
    (["--ping-interval-ms", "2.5"],
     "--ping-interval-ms (settings.ping_interval_ms): 2.5 is not a whole number"),
    (["--join-wait-s", "-1"], "--join-wait-s (settings.join_wait_s)"),
    (["--tls", "--no-encryption"], "tls: true and encryption: false contradict"),
    (["--join-fresh", "threads"], "'threads' is not one of"),
])
def test_a_generated_option_reaches_the_topology(tmp_path: Path, args: list[str],
                                                 expected: str) -> None:
    result = runner.invoke(app, ["run", "throughput", *args, "--out", str(tmp_path)],
                           env={"DOCKER_HOST": "unix:///nonexistent"})
    assert result.exit_code == 2, result.output
    assert expected in " ".join(result.output.split())
    assert not list(tmp_path.iterdir())


def test_runs_scenarios_argument_names_every_scenario() -> None:
    command = typer.main.get_command(app).commands["run"]  # type: ignore[attr-defined]
    argument = next(p for p in command.params if p.name == "scenarios")
    named = argument.help.removeprefix("Scenarios: ").rstrip(".").split(", ")
    assert sorted(named) == sorted(SCENARIOS)
