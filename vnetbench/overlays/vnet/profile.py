"""The vNet profile: every vNet fact the adapter and its templates use.

The shipped `profile.yml` describes the public snapshot; a user's file
(--vnet-profile / VNETBENCH_VNET_PROFILE) is merged over it key by key.
"""

from __future__ import annotations

import os
import re
from functools import cache
from ipaddress import IPv4Address, IPv4Network
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from vnetbench.core.yamlfile import load_yaml, not_a_regular_file, read_yaml_text, yaml_problem
from vnetbench.errors import UserError

SHIPPED_PROFILE = Path(__file__).with_name("profile.yml")
PROFILE_VARIABLE = "VNETBENCH_VNET_PROFILE"
ROLES = ("conductor", "switch", "agent")


class Part(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Feature(Part):
    """A feature only some vNet builds have; `detect` must occur in the program."""

    model_config = ConfigDict(extra="allow", frozen=True)
    detect: str
    available: bool | None = None  # force on/off instead of detecting

    def get(self, key: str) -> Any:
        return (self.model_extra or {})[key]


# What reaches a compose file or a shell from the profile is held to these, so a
# profile shared between people cannot add keys to the compose file or commands.
PATH_PATTERN = r"^/[A-Za-z0-9._/+-]+$"
VARIABLE_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"
Program = Annotated[str, Field(pattern=PATH_PATTERN)]
# Docker's image reference grammar (distribution/reference), without IPv6 hosts: an
# image name reaches the compose file (image:), where a newline would add keys.
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_LABEL = r"[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?"
_HOST = rf"(?:{_LABEL}(?:\.{_LABEL})*(?::[0-9]+)?/)?"
IMAGE_REFERENCE = (rf"^{_HOST}{_COMPONENT}(?:/{_COMPONENT})*(?::[A-Za-z0-9_][A-Za-z0-9_.-]"
                   r"{0,127})?(?:@sha256:[0-9a-f]{64})?$")
ImageName = Annotated[str, Field(pattern=IMAGE_REFERENCE, max_length=255)]
Variable = Annotated[str, Field(pattern=VARIABLE_PATTERN)]
SAFE_FEATURE_KEYS = ("path", "variable", "packets_variable", "bits_variable", "cert", "key",
                     "ca", "environment")


class ConfigFormat(Part):
    holder: str = Field(pattern="^(switch|conductor)$")
    path: Program
    comment: str
    address_line: str
    rule_line: str


class Environment(Part):
    conductor_address: Variable
    conductor_port: Variable
    config_path: Variable
    dump_path: Variable


class VnetProfile(Part):
    name: str
    images: dict[str, ImageName]
    runtime_image: ImageName
    programs: dict[str, Program]
    arguments: dict[str, list[str]]
    ports: dict[str, int]
    environment: Environment
    tun_roles: list[str]
    forwarding_roles: list[str]
    tun_interface: str = Field(pattern=r"^[A-Za-z0-9_.-]*\{name\}[A-Za-z0-9_.-]*$")
    virtual_network: IPv4Network
    virtual_first: IPv4Address
    tun_prefix: int = Field(24, ge=8, le=30)
    config: ConfigFormat
    features: dict[str, Feature]
    events: dict[str, dict[str, str]]

    @field_validator("images", "programs", "arguments")
    @classmethod
    def _every_role(cls, value: dict[str, Any]) -> dict[str, Any]:
        missing = [role for role in ROLES if role not in value]
        if missing:
            raise ValueError(f"missing role(s) {', '.join(missing)}")
        return value

    @field_validator("events")
    @classmethod
    def _patterns_compile(cls, value: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
        for role, patterns in value.items():
            for event, pattern in patterns.items():
                try:
                    re.compile(pattern)
                except re.error as error:
                    raise ValueError(f"{role}.{event}: bad regular expression ({error})") from None
        return value

    @field_validator("features")
    @classmethod
    def _feature_names_are_safe(cls, value: dict[str, Feature]) -> dict[str, Feature]:
        """Paths and variable names of features reach the compose file: hold them to
        the same patterns as the rest of the profile."""
        for name, feature in value.items():
            for key, item in (feature.model_extra or {}).items():
                names = list(item) if isinstance(item, dict) else [item]
                pattern = PATH_PATTERN if key == "path" else VARIABLE_PATTERN
                if key in SAFE_FEATURE_KEYS and not all(
                        re.match(pattern, str(n)) for n in names):
                    raise ValueError(f"{name}.{key}: {item!r} must match {pattern}")
        return value

    def feature(self, name: str) -> Feature:
        return self.features[name]

    @model_validator(mode="after")
    def _first_address_usable(self) -> VnetProfile:
        """virtual_first is a host of virtual_network, and of its agent's TUN subnet."""
        tun = IPv4Network(f"{self.virtual_first}/{self.tun_prefix}", strict=False)
        if self.virtual_first not in self.virtual_network or not tun.subnet_of(
                self.virtual_network):
            raise ValueError(f"virtual_first {self.virtual_first} and its /{self.tun_prefix} "
                             f"must lie inside virtual_network {self.virtual_network}")
        if self.virtual_first in (tun.network_address, tun.broadcast_address):
            raise ValueError(f"virtual_first {self.virtual_first} is the network or broadcast "
                             f"address of its agent's TUN subnet {tun}")
        return self

    def virtual_address(self, index: int) -> IPv4Address:
        """Agent `index`'s address: the index-th usable host from virtual_first, where
        usable skips each TUN subnet's network and broadcast address (an agent puts its
        address on its TUN device as a /tun_prefix: 10.0.1.255 would be a broadcast)."""
        size = 2 ** (32 - self.tun_prefix)
        first = int(self.virtual_first)
        start = first - first % size
        position = first - start - 1 + index
        address = start + position // (size - 2) * size + position % (size - 2) + 1
        if address > int(self.virtual_network.broadcast_address):
            raise UserError(
                f"vNet's virtual network {self.virtual_network} holds {index} agents from "
                f"{self.virtual_first} (each /{self.tun_prefix} without its network and "
                f"broadcast address), and agent {index + 1} does not fit. Use fewer agents or "
                "widen 'virtual_network' in the vNet profile."
            )
        return IPv4Address(address)


def merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Nested dictionaries merge key by key; anything else is replaced."""
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def read_yaml(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise UserError(not_a_regular_file(path, "Give the path of a YAML file of profile "
                                           f"keys, or unset {PROFILE_VARIABLE}.") or
            f"There is no vNet profile at {path}. Give the path of a YAML file holding the "
            f"keys that differ from the shipped profile ({SHIPPED_PROFILE}), or unset "
            f"{PROFILE_VARIABLE}."
        )
    try:
        data = load_yaml(read_yaml_text(path)) or {}
    except (UnicodeDecodeError, OSError) as error:
        raise UserError(f"The vNet profile {path} cannot be read as a YAML text file "
                        f"({error}). Give a YAML file of profile keys.") from None
    except (yaml.YAMLError, RecursionError) as error:
        where, fix = yaml_problem(error)
        raise UserError(f"The vNet profile {path} is not valid YAML{where}. {fix}.") from None
    if not isinstance(data, dict):
        raise UserError(f"The vNet profile {path} must be a YAML mapping of profile keys.")
    return data


@cache
def load_profile(override: Path | None = None) -> VnetProfile:
    """The shipped profile, with a user's file (argument or environment) over it."""
    if override is None and os.environ.get(PROFILE_VARIABLE):
        override = Path(os.environ[PROFILE_VARIABLE])
    data = read_yaml(SHIPPED_PROFILE)
    source = str(SHIPPED_PROFILE)
    if override is not None:
        data = merge(data, read_yaml(override))
        source = f"{override} (over the shipped profile)"
    try:
        return VnetProfile.model_validate(data)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in error.errors()
        )
        raise UserError(f"The vNet profile {source} is not valid: {problems}. Fix these keys.")\
            from None
