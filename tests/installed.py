"""The package as a user installs it: the wheel built from this checkout, installed
into a throwaway venv outside the checkout (no network: hatchling comes from the
`test` extra; the dependencies are this environment's, made importable by a .pth)."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 120


def run(command: list[str | Path], cwd: Path, env: dict[str, str],
        timeout: float = TIMEOUT) -> str:
    result = subprocess.run(
        [str(part) for part in command], cwd=cwd, env=env, capture_output=True, text=True,
        timeout=timeout,
    )
    assert result.returncode == 0, (
        f"{' '.join(map(str, command))} exited {result.returncode}:\n"
        f"{result.stdout}\n{result.stderr}"
    )
    return result.stdout


@dataclass(frozen=True)
class Installed:
    venv: Path
    env: dict[str, str]  # nothing of the checkout leaks in through it

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"


def install_wheel(tmp_path: Path, **env_overrides: str) -> Installed:
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "VNETBENCH_TEMPLATES",
                          "VNETBENCH_IMAGES")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env.update(env_overrides)

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
    return Installed(venv, env)
