"""The model's building blocks, below the topology and the scenarios' declarations:
the names of things, the strict base model, the mark of a setting a measurement reads, amounts read
from text, the base of a scenario's own settings, and reading a model's YAML file."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, ClassVar, TypeVar

import yaml
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from vnetbench.core.units import (
    format_milliseconds,
    parse_bytes,
    parse_milliseconds,
    parse_percent,
    parse_rate,
)
from vnetbench.core.yamlfile import load_yaml, read_yaml_text, yaml_problem
from vnetbench.errors import UserError

NAME_PATTERN = r"^[a-z][a-z0-9-]{0,30}$"
NAME_RULE = ("lower-case letters, digits and '-', starting with a letter, at most 31 "
             "characters (it names containers, hosts and key files)")


def check_name(value: str) -> str:
    """A whole-string match: `re.match(...$)` let 'agent1\n' through, whose newline
    broke the compose file it names a service of."""
    if not isinstance(value, str) or not re.fullmatch(NAME_PATTERN, value):
        suggestion = re.sub(r"[^a-z0-9-]+", "-", str(value).lower()).strip("-")[:31]
        hint = f", e.g. '{suggestion}'" if re.fullmatch(NAME_PATTERN, suggestion) else ""
        raise ValueError(f"{value!r} is not a usable name: use {NAME_RULE}{hint}")
    return value


Name = Annotated[str, BeforeValidator(check_name)]


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


@dataclass(frozen=True)
class SettingUse:
    """A setting's mark, where it is declared: what reads it."""

    reader: str


MEASURED = SettingUse("a measurement, not the stack")  # -> MEASUREMENT_SETTINGS
T = TypeVar("T")
Measured = Annotated[T, MEASURED]
Bytes = Annotated[int, BeforeValidator(parse_bytes), Field(ge=1)]
Rate = Annotated[int, BeforeValidator(parse_rate)]
Milliseconds = Annotated[float, BeforeValidator(parse_milliseconds), Field(ge=0)]
Percent = Annotated[float, BeforeValidator(parse_percent)]


def duration_text(milliseconds: float) -> str:
    """10.0 -> '10ms'; 100000000.0 -> '100000s' (as a person would write it)."""
    if milliseconds >= 1000:
        return f"{milliseconds / 1000:g}s"
    return format_milliseconds(milliseconds)


class ScenarioSettings(Model):
    """One scenario's settings, under its name in a topology's `settings` (`room:
    {rate: 5}`). Each is also known by its flat name, `prefix` + field (`room_rate`):
    the `run` option's (--room-rate), and the key topology files held before."""

    prefix: ClassVar[str]

    @classmethod
    def flat_name(cls, field: str) -> str:
        return cls.prefix + field

    @classmethod
    def field_of(cls, flat: str) -> str | None:
        """The field a flat name stands for (room_rate -> rate), or None."""
        field = flat.removeprefix(cls.prefix)
        return field if flat.startswith(cls.prefix) and field in cls.model_fields else None


def read_yaml(path: Path, give: str) -> object:
    """A YAML file's data; a file that cannot be read or parsed is a UserError naming
    where, and `give` what to give instead (e.g. "a topology file, e.g. ...")."""
    try:
        return load_yaml(read_yaml_text(path))
    except (UnicodeDecodeError, OSError) as error:
        raise UserError(f"{path} cannot be read as a YAML text file ({error}). Give "
                        f"{give}.") from None
    except (yaml.YAMLError, RecursionError) as error:
        where, fix = yaml_problem(error)
        raise UserError(f"{path} is not valid YAML{where}. {fix} and run again.") from None
