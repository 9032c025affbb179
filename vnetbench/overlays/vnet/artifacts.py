"""Getting vNet in: user-built images by name, or a directory of user-built programs.

vNet is in no registry, and none of its code or build recipe may enter this
project. A user either builds vNet's own images (named in the profile, the
topology's `overlay_options.vnet.images`, --vnet-image or VNETBENCH_VNET_IMAGES),
or builds the three programs with vNet's CMake instructions and runs
`vnetbench images vnet --programs DIR`, which wraps them into a runtime image.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from vnetbench.engines.base import EngineError, HostRuntime, Mount, ToolSpec
from vnetbench.errors import UserError
from vnetbench.model.topology import Topology
from vnetbench.overlays.vnet.libraries import find_packages, parse_ldd
from vnetbench.overlays.vnet.profile import IMAGE_REFERENCE, ROLES, VnetProfile, load_profile
from vnetbench.runtime.labels import helper_labels
from vnetbench.runtime.paths import IMAGES

IMAGES_VARIABLE = "VNETBENCH_VNET_IMAGES"
HOW_TO_PROVIDE = (
    "Provide vNet in one of two ways: (a) build vNet's own images (its "
    "docker/Dockerfile.{conductor,switch,agent}) and tag them vnet-conductor, vnet-switch "
    "and vnet-agent, or name yours with --vnet-image ROLE=IMAGE or "
    f"{IMAGES_VARIABLE}=conductor=...,switch=...,agent=...; or (b) build the three programs "
    "with vNet's CMake instructions and run 'vnetbench images vnet --programs BUILD_DIR'."
)


@dataclass(frozen=True)
class VnetImages:
    images: dict[str, str]  # role -> image
    source: str  # how they were found, for doctor and run.json


def parse_image_list(text: str) -> dict[str, str]:
    """'IMAGE' for all roles, or 'conductor=A,switch=B,agent=C'."""
    chosen = dict.fromkeys(ROLES, text.strip()) if "=" not in text else {}
    for part in filter(None, (p.strip() for p in text.split(",") if "=" in text)):
        role, _, image = part.partition("=")
        if role not in ROLES or not image:
            raise UserError(
                f"'{part}' in the vNet image list is not ROLE=IMAGE with ROLE one of "
                f"{', '.join(ROLES)}. Write e.g. conductor=my-conductor,agent=my-agent."
            )
        chosen[role] = image
    bad = [image for image in chosen.values() if not re.fullmatch(IMAGE_REFERENCE, image)]
    if bad:
        raise UserError(
            f"'{bad[0]}' in the vNet image list is not a Docker image name (lower-case "
            "name[:tag], e.g. vnet-agent or my/vnet-agent:1.2). Correct it."
        )
    return chosen


def requested_images(profile: VnetProfile, chosen: dict[str, str]) -> tuple[dict[str, str], str]:
    """The image names asked for (options over environment over profile), and by whom."""
    requested = dict(profile.images)
    source = "the profile's image names"
    if os.environ.get(IMAGES_VARIABLE):
        requested |= parse_image_list(os.environ[IMAGES_VARIABLE])
        source = IMAGES_VARIABLE
    if chosen:
        requested |= chosen
        source = "the topology/command line"
    return requested, source


def with_vnet_options(topology: Topology, images: list[str] | None,
                      profile: Path | None) -> Topology:
    """The topology with --vnet-image/--vnet-profile in its vnet overlay options."""
    if not images and profile is None:
        return topology
    vnet = dict(topology.overlay_options.get("vnet", {}))
    for item in images or []:
        vnet["images"] = {**vnet.get("images", {}), **parse_image_list(item)}
    if profile is not None:
        load_profile(profile)  # read now: a bad profile is refused before anything starts
        vnet["profile"] = str(profile)
    return topology.model_copy(update={"overlay_options": {**topology.overlay_options,
                                                           "vnet": vnet}})


def resolve_images(runtime: HostRuntime, profile: VnetProfile, chosen: dict[str, str]
                   ) -> tuple[VnetImages | None, str]:
    """The images to run (chosen: role -> image from the topology), or None and why."""
    requested, source = requested_images(profile, chosen)
    missing = [f"{role} ({image})" for role, image in requested.items()
               if not runtime.image_id(image)]
    if not missing:
        return VnetImages(requested, f"images named by {source}"), ""
    if source == "the profile's image names" and runtime.image_id(profile.runtime_image):
        return (VnetImages(dict.fromkeys(ROLES, profile.runtime_image),
                           f"runtime image {profile.runtime_image} built from programs"), "")
    if source != "the profile's image names":
        return None, (f"the vNet images named by {source} are not on this engine: "
                      f"{', '.join(missing)}. Build or load them, or correct the names.")
    return None, (f"no vNet images: {', '.join(missing)} not found on this engine, and no "
                  f"runtime image {profile.runtime_image}. {HOW_TO_PROVIDE}")


_contains: dict[tuple[str, str, str], bool] = {}  # asked once per process


def program_contains(runtime: HostRuntime, image: str, program: str, needle: str) -> bool:
    """Does the program inside the image contain the string (a feature marker)?"""
    key = (image, program, needle)
    if key not in _contains:
        try:
            runtime.run_helper(ToolSpec(("-a", "-q", needle, program),
                                        helper_labels("vnet-check", "local"), image=image,
                                        entrypoint="grep"))
            _contains[key] = True
        except EngineError:
            _contains[key] = False
    return _contains[key]


def feature_state(runtime: HostRuntime, profile: VnetProfile, images: VnetImages,
                  feature: str, role: str = "switch") -> str | None:
    """None when this build has the feature, else why it is reported as absent."""
    spec = profile.feature(feature)
    if spec.available is not None:
        return None if spec.available else f"the vNet profile marks '{feature}' as absent"
    role = str((spec.model_extra or {}).get("role", role))
    if program_contains(runtime, images.images[role], profile.programs[role], spec.detect):
        return None
    return (f"not supported by this vNet build: its {role} program has no '{spec.detect}' "
            f"(feature '{feature}'; set features.{feature}.available in a --vnet-profile if "
            "your build names it differently)")


def libraries(program: Path) -> tuple[dict[str, str], list[str]]:
    """Host ldd of a program: resolved name -> path, and names not found."""
    result = subprocess.run(["ldd", str(program)], capture_output=True, text=True, timeout=30)
    report = parse_ldd(result.stdout + result.stderr)
    return report.resolved, report.missing


def check_programs(directory: Path, profile: VnetProfile) -> dict[str, Path]:
    programs = {role: directory / Path(profile.programs[role]).name for role in ROLES}
    absent = [str(p) for p in programs.values() if not (p.is_file() and os.access(p, os.X_OK))]
    if absent:
        raise UserError(
            f"The programs directory {directory} lacks {', '.join(absent)} (executable). "
            "Build them with vNet's CMake instructions (cmake --build BUILD --target conductor "
            "switch agent) and give the build directory."
        )
    return programs


def missing_in_base(runtime: HostRuntime, base: str, directory: Path) -> list[str]:
    """Libraries the programs need that the base image does not have."""
    script = "for p in /programs/*; do ldd \"$p\"; done"
    try:
        output = runtime.run_helper(ToolSpec(("sh", "-c", script),
                                             helper_labels("vnet-wrap", "local"), image=base,
                                             mounts=(Mount(directory, "/programs"),)))
    except EngineError as error:
        output = (error.stdout or "") + (error.stderr or "")
    return parse_ldd(str(output)).missing


def build_runtime_image(runtime: HostRuntime, directory: Path, profile: VnetProfile) -> str:
    """Wrap user-built programs into one runtime image (base + the libraries they need).

    A library the base image lacks is installed from the package of the base's
    distribution that ships it; only a library no such package ships is copied from
    this machine, and one that neither has is an error.
    """
    programs = check_programs(directory.resolve(), profile)
    base = runtime.base_image()
    with tempfile.TemporaryDirectory(prefix="vnet-runtime-") as scratch:
        context = Path(scratch)
        shutil.copytree(IMAGES / "vnet-runtime", context, dirs_exist_ok=True)
        (context / "bin").mkdir()
        (context / "lib").mkdir()
        for role, program in programs.items():
            shutil.copy2(program, context / "bin" / Path(profile.programs[role]).name)
        needed = missing_in_base(runtime, base, context / "bin")
        lookup = find_packages(runtime, base, needed)
        host_paths: dict[str, str] = {}
        for program in programs.values():
            host_paths |= libraries(program)[0]
        unavailable = [lib for lib in lookup.unresolved if lib not in host_paths]
        if unavailable:
            raise UserError(
                f"The vNet programs need {', '.join(unavailable)}, which the base image "
                f"({base}) lacks, no package of its distribution ships (looked up with "
                "apt-cache and dpkg -c in it), and this machine does not have either. "
                "Install it on this machine (it is then copied into the image), or build "
                "vNet against libraries that Debian 13 packages, or build vNet's own images "
                "and name them with --vnet-image."
            )
        for lib in lookup.unresolved:
            shutil.copy2(Path(host_paths[lib]).resolve(), context / "lib" / lib)
        (context / "packages.txt").write_text("".join(f"{p}\n" for p in lookup.to_install))
        runtime.build_image(context, profile.runtime_image, base, label="vnet-runtime")
    verify_runtime_image(runtime, profile)
    return profile.runtime_image


def verify_runtime_image(runtime: HostRuntime, profile: VnetProfile) -> None:
    script = "; ".join(f"ldd {p}" for p in profile.programs.values())
    try:
        output = runtime.run_helper(ToolSpec(("sh", "-c", script),
                                             helper_labels("vnet-check", "local"),
                                             image=profile.runtime_image, entrypoint=""))
    except EngineError as error:
        output = (error.stdout or "") + (error.stderr or "")
    report = parse_ldd(output)
    problems = report.missing + report.versions_missing
    if problems:
        runtime.remove_image(profile.runtime_image)
        raise UserError(
            f"The vNet runtime image cannot run the programs: {', '.join(sorted(set(problems)))} "
            "missing inside it. Build the programs on a system no newer than Debian 13 "
            "(glibc 2.41), or build vNet's own images instead."
        )
