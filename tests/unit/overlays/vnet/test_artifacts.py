"""vNet's images are looked up on the runtime the caller passes (HostRuntime.image_id),
never on an engine the module reaches itself."""

from __future__ import annotations

from typing import Any

import pytest

from vnetbench.overlays.vnet.artifacts import IMAGES_VARIABLE, resolve_images
from vnetbench.overlays.vnet.profile import ROLES, load_profile


class Runtime:
    """A runtime with these images (name -> id), counting what it was asked."""

    def __init__(self, images: dict[str, str]) -> None:
        self.images, self.asked = images, []  # type: ignore[var-annotated]

    def image_id(self, name: str) -> str | None:
        self.asked.append(name)
        return self.images.get(name)


def resolve(runtime: Any, chosen: dict[str, str] | None = None) -> tuple[Any, str]:
    return resolve_images(runtime, load_profile(None), chosen or {})


@pytest.fixture(autouse=True)
def no_image_list(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(IMAGES_VARIABLE, raising=False)


def test_the_profile_s_images_on_the_runtime_are_used() -> None:
    profile = load_profile(None)
    runtime = Runtime({image: f"sha256:{role}" for role, image in profile.images.items()})
    images, reason = resolve(runtime)
    assert reason == "" and images.images == dict(profile.images)
    assert set(runtime.asked) == set(profile.images.values())


def test_without_them_the_runtime_image_built_from_programs() -> None:
    profile = load_profile(None)
    images, reason = resolve(Runtime({profile.runtime_image: "sha256:r"}))
    assert reason == "" and images.images == dict.fromkeys(ROLES, profile.runtime_image)


def test_images_named_but_absent_are_said() -> None:
    images, reason = resolve(Runtime({}), {"agent": "my-agent"})
    assert images is None and "my-agent" in reason and "not on this engine" in reason
