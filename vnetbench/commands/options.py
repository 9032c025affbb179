"""The option types the commands share, and `run`'s options generated from the
Settings model: every setting is an option (its name the field's flat name, a
scenario's prefixed: --room-rate; its help the field's description), so a new
setting is a `run` option by itself."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from pathlib import Path
from types import NoneType, UnionType
from typing import Annotated, Any, TypeVar, Union, cast, get_args, get_origin

import typer
from pydantic import BeforeValidator
from pydantic.fields import FieldInfo

from vnetbench.commands.common import number_list
from vnetbench.model.topology import setting_fields

TopologyOption = Annotated[
    Path, typer.Option("--topology", "-t", help="Topology YAML file.")
]
EngineOption = Annotated[str | None, typer.Option(
    help="compose: this machine's engine; swarm: the nodes of a Docker Swarm (the "
         "topology's manager, else VNETBENCH_SWARM, else this machine's swarm; 'vnetbench "
         "swarm up' makes a test one here, used when named: engine: {manager: test} or "
         "VNETBENCH_SWARM=test). Overrides the topology's 'engine'.")]
AllowFailedOption = Annotated[bool, typer.Option(
    "--allow-failed", help="Exit 0 even when a pass failed or its path was dead (still "
                           "named on stderr); without it such a run exits 1.")]
SloOption = Annotated[str | None, typer.Option(
    "--slo", help="Targets, SCENARIO.METRIC>=VALUE or <=VALUE separated by commas (the "
                  "metric's unit; room.p99_ms is room_p99_ms), e.g. "
                  "throughput.tcp_mbit>=500,room.p99_ms<=50: each checked per cell on the "
                  "median of its passes, printed as a table; a miss exits 1.")]

Command = TypeVar("Command", bound=Callable[..., Any])


def option_name(field: str) -> str:
    """ping_sizes -> --ping-sizes (as load_topology names an override's origin)."""
    return "--" + field.replace("_", "-")


def off_switch(info: FieldInfo) -> bool:
    """A setting the command line only turns off (encryption: --no-encryption)."""
    extra = info.json_schema_extra
    return isinstance(extra, dict) and extra.get("option") == "off switch"


def option_type(info: FieldInfo) -> Any:
    """What the command line takes for a setting: its own type, or the text the model
    reads (an amount such as 100MiB; numbers separated by commas, for a tuple)."""
    kind = info.annotation
    if get_origin(kind) in (Union, UnionType):
        kind = next(arg for arg in get_args(kind) if arg is not NoneType)
    if get_origin(kind) is Annotated:
        kind = get_args(kind)[0]
    if get_origin(kind) is tuple or any(isinstance(m, BeforeValidator) for m in info.metadata):
        return str
    return kind


def setting_parameter(name: str, info: FieldInfo) -> inspect.Parameter:
    """One setting's option; not given, None (the topology's value holds)."""
    if off_switch(info):
        option = typer.Option(option_name(f"no_{name}"), help=info.description)
        kind, default = bool, False
    else:
        option = typer.Option(help=info.description)
        kind, default = option_type(info) | None, None
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default,
                             annotation=cast(Any, Annotated)[kind, option])


def settings_options(after: str) -> Callable[[Command], Command]:
    """The command with an option per setting, after its parameter `after`; it takes
    them as **settings (settings_given reads them)."""

    def apply(command: Command) -> Command:
        signature = inspect.signature(command, eval_str=True)
        own = [p.replace(kind=p.KEYWORD_ONLY) for p in signature.parameters.values()
               if p.kind is not p.VAR_KEYWORD]
        at = [p.name for p in own].index(after) + 1
        generated = [setting_parameter(n, i) for n, i in setting_fields().items()]
        cast(Any, command).__signature__ = signature.replace(
            parameters=[*own[:at], *generated, *own[at:]])
        return command

    return apply


def settings_given(values: Mapping[str, Any]) -> dict[str, Any]:
    """The settings the options gave, as the topology's overrides (those not given
    left out)."""
    given = {}
    for name, info in setting_fields().items():
        value = values.get(name)
        if off_switch(info):
            value = False if value else None
        elif get_origin(info.annotation) is tuple:
            value = number_list(value, option_name(name))
        if value is not None:
            given[name] = value
    return given
