"""An installed wheel (not an editable checkout) carries what it needs to render.

Builds the wheel from this checkout, installs it into a throwaway venv outside
the checkout and runs the installed `vnetbench` from a directory outside it too.
No network (hatchling comes from the `test` extra) and no Docker engine.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 120


def run(command: list[str | Path], cwd: Path, env: dict[str, str]) -> str:
    result = subprocess.run(
        [str(part) for part in command], cwd=cwd, env=env, capture_output=True, text=True,
        timeout=TIMEOUT,
    )
    assert result.returncode == 0, (
        f"{' '.join(map(str, command))} exited {result.returncode}:\n"
        f"{result.stdout}\n{result.stderr}"
    )
    return result.stdout


def test_installed_wheel_renders_outside_the_checkout(tmp_path: Path) -> None:
    # Nothing of the checkout leaks in through the environment; rendering a
    # baseline topology must not need a Docker engine.
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "VNETBENCH_TEMPLATES",
                          "VNETBENCH_IMAGES")}
    env["DOCKER_HOST"] = "unix:///nonexistent"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"

    wheels = tmp_path / "wheels"
    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
         "-w", wheels, ROOT], cwd=tmp_path, env=env)
    (wheel,) = wheels.glob("vnetbench-*.whl")

    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=tmp_path, env=env)
    python = venv / "bin" / "python"
    # This environment's pip installs into the throwaway venv. The wheel goes in
    # before the dependencies are made visible, so pip never sees (or touches)
    # the editable install in this environment.
    run([sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps",
         wheel], cwd=tmp_path, env=env)

    # Plain lines in a .pth are only appended to sys.path: this environment's
    # dependencies become importable, its own .pth files (the editable install
    # pointing at the checkout) are not processed.
    site = Path(run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                    cwd=tmp_path, env=env).strip())
    ours = dict.fromkeys(sysconfig.get_paths()[key] for key in ("purelib", "platlib"))
    (site / "zz-vnetbench-test-deps.pth").write_text("".join(f"{path}\n" for path in ours))

    package = Path(run([python, "-c", "import vnetbench; print(vnetbench.__file__)"],
                       cwd=tmp_path, env=env).strip()).parent
    assert package.is_relative_to(venv), package
    assert not package.is_relative_to(ROOT), package
    data = package / "_data"
    for name in ("images/tools/Dockerfile", "images/base/bootstrap",
                 "templates/compose.yml.j2", "topologies/two-sites.yml"):
        assert (data / name).is_file(), name
    paths = run([python, "-c", "from vnetbench import cli, paths; print(paths.TEMPLATES, "
                               "paths.IMAGES, paths.TOPOLOGIES, cli.DEFAULT_TOPOLOGY)"],
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
