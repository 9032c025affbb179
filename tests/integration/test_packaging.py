"""An installed wheel (not an editable checkout) carries what it needs to render.

Builds the wheel from this checkout, installs it into a throwaway venv outside
the checkout and runs the installed `vnetbench` from a directory outside it too.
No network (hatchling comes from the `test` extra) and no Docker engine.


Here, not under tests/unit, though it needs no engine: building and installing a wheel
(5.5 s) is end to end, beyond the unit suite's time."""

from __future__ import annotations

from pathlib import Path

from tests.installed import ROOT, install_wheel, run


def test_installed_wheel_renders_outside_the_checkout(tmp_path: Path) -> None:
    # Rendering a baseline topology must not need a Docker engine.
    installed = install_wheel(tmp_path, DOCKER_HOST="unix:///nonexistent")
    env, python, venv = installed.env, installed.python, installed.venv

    package = Path(run([python, "-c", "import vnetbench; print(vnetbench.__file__)"],
                       cwd=tmp_path, env=env).strip()).parent
    assert package.is_relative_to(venv), package
    assert not package.is_relative_to(ROOT), package
    data = package / "_data"
    for name in ("images/tools/Dockerfile", "images/base/bootstrap",
                 "templates/compose.yml.j2", "topologies/two-sites.yml"):
        assert (data / name).is_file(), name
    paths = run([python, "-c", "from vnetbench.runtime import paths; "
                               "from vnetbench.commands import common; "
                               "print(paths.TEMPLATES, paths.IMAGES, paths.TOPOLOGIES, "
                               "common.DEFAULT_TOPOLOGY)"],
                cwd=tmp_path, env=env).split()
    default_topology = data / "topologies" / "two-sites.yml"
    assert paths == [str(data / "templates"), str(data / "images"), str(data / "topologies"),
                     str(default_topology)]

    vnetbench = venv / "bin" / "vnetbench"
    run([vnetbench, "validate", default_topology], cwd=tmp_path, env=env)

    topology = tmp_path / "t.yml"
    topology.write_text("name: t\nswitches: 2\nagents: 2\n")
    out = tmp_path / "out"
    run([vnetbench, "render", topology, "-o", out], cwd=tmp_path, env=env)
    compose = out / "compose.yml"
    assert compose.is_file()
    assert "vnetbench.run" in compose.read_text()
