"""Building the project's images on this machine's engine.

Online users build FROM debian:trixie-slim as usual. Where no registry answers,
the base is made with debootstrap + docker import (images/base/bootstrap).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from python_on_whales.exceptions import DockerException

from vnetbench.engines.docker import docker, translated
from vnetbench.errors import EnvironmentProblem
from vnetbench.runtime.images import (
    BOOTSTRAPPED_BASE,
    OFFICIAL_BASE,
    ImageSet,
    context_digest,
)
from vnetbench.runtime.paths import IMAGES
from vnetbench.terminal.ui import waiting


def image_id(name: str) -> str | None:
    try:
        return str(docker.image.inspect(name).id)
    except DockerException:
        return None


@translated
def ensure_base_image() -> str:
    """The base image to build on: local, pulled, or bootstrapped offline."""
    for name in (OFFICIAL_BASE, BOOTSTRAPPED_BASE):
        if image_id(name):
            return name
    try:
        with waiting(f"pulling {OFFICIAL_BASE}"):
            docker.pull(OFFICIAL_BASE, quiet=True)
        return OFFICIAL_BASE
    except DockerException:
        pass
    with waiting(f"no registry answers: bootstrapping {BOOTSTRAPPED_BASE} with debootstrap"):
        result = subprocess.run(
            # via bash: an installed copy of the script may have lost its mode bits
            ["bash", str(IMAGES / "base" / "bootstrap"), BOOTSTRAPPED_BASE],
            capture_output=True,
            text=True,
            timeout=900,
        )
    if result.returncode != 0:
        raise EnvironmentProblem(
            f"The base image could not be pulled ({OFFICIAL_BASE}) nor bootstrapped offline: "
            f"{result.stderr.strip()[-600:]} Make {OFFICIAL_BASE} available "
            "(docker load or a reachable registry) or fix debootstrap, then run again."
        )
    return BOOTSTRAPPED_BASE


def build_image(context: str, tag: str, base: str) -> None:
    """Build one image from images/<context> on the given base."""
    build_image_from(IMAGES / context, tag, base, label=context)


def is_current(tag: str, context: str) -> bool:
    try:
        labels = docker.image.inspect(tag).config.labels or {}
    except DockerException:
        return False
    return labels.get("vnetbench.context") == context_digest(IMAGES / context)


@translated
def build_image_from(path: Path, tag: str, base: str, label: str) -> None:
    """Build a context directory on the given base image."""
    try:
        with waiting(f"building {tag}"):
            docker.legacy_build(
                path,
                tags=[tag],
                build_args={"BASE_IMAGE": base},
                labels={"vnetbench.image": label, "vnetbench.context": context_digest(path)},
            )
    except DockerException as error:
        raise EnvironmentProblem(
            f"Building the {tag} image from {path} failed: {error.stderr or error}. "
            "The build installs Debian packages, so the Debian archive must be reachable."
        ) from None


@translated
def build_project_images(force: bool = False) -> ImageSet:
    """Make sure every image the project's own containers use exists."""
    images = ImageSet()
    for context, tag in (("tools", images.tools), ("overlays", images.overlays)):
        if force or not is_current(tag, context):
            build_image(context, tag, ensure_base_image())
    return images


@translated
def remove_image(name: str) -> None:
    docker.image.remove(name, force=True)
