"""The Docker engine: does it answer, and with Compose v2?"""

from __future__ import annotations

from python_on_whales import docker
from python_on_whales.exceptions import DockerException

ENGINE_HELP = (
    "Run 'make setup' (it installs and starts Debian's engine when run as root on "
    "Debian/Ubuntu), or install Docker Engine with the Compose v2 plugin and start it, "
    "then run the command again."
)


def engine_version() -> str | None:
    try:
        return str(docker.version().server.version)  # type: ignore[union-attr]
    except (DockerException, AttributeError):
        return None


def compose_version() -> str | None:
    try:
        text = str(docker.compose.version())
    except DockerException:
        return None
    return text.split()[-1] if "v2" in text or " 2." in text else None


def require_engine() -> None:
    from vnetbench.errors import UserError

    if engine_version() is None:
        raise UserError(f"The Docker engine does not answer ('docker info' fails). {ENGINE_HELP}")
    if compose_version() is None:
        raise UserError(f"Docker answers but Compose v2 ('docker compose') does not. {ENGINE_HELP}")
