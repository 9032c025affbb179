"""`vnetbench images build|vnet`: build the project's images, or wrap vNet programs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from vnetbench.commands.common import guarded
from vnetbench.terminal.ui import out_console


@guarded
def build() -> None:
    """Build the project's images (offline base with debootstrap if no registry)."""
    from vnetbench.engines import local, require_engine

    require_engine()
    images = local().project_images(force=True)
    out_console.print(f"images ready: {images.tools}")


@guarded
def vnet(
    programs: Annotated[Path, typer.Option(help="Directory with the built conductor, switch "
                                                "and agent programs.")],
    vnet_profile: Annotated[Path | None, typer.Option(help="vNet profile overrides.")] = None,
) -> None:
    """Wrap user-built vNet programs into a runtime image (base + the libraries they need)."""
    from vnetbench.engines import local, require_engine
    from vnetbench.overlays.vnet.artifacts import build_runtime_image, check_programs
    from vnetbench.overlays.vnet.profile import load_profile

    profile = load_profile(vnet_profile)
    check_programs(programs.absolute(), profile)  # before the engine (resolve: a loop raises)
    require_engine()
    image = build_runtime_image(local(), programs, profile)
    out_console.print(f"vNet runtime image ready: {image} (used for every role when the "
                      "named vNet images are absent)")

