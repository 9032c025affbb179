"""Where a run's private keys live: a scratch directory per run outside the results
directory, which teardown and `vnetbench clean` wipe.

A stack directory in results holds, for each folder of an overlay's files
(`wireguard/`, `tinc/`...), a symbolic link into the run's scratch directory
(under $XDG_RUNTIME_DIR, a tmpfs, when there is one); the engine mounts what the
link points to. Keys are written there and nowhere else, so a run killed mid-way
(SIGKILL, Ctrl-C while keys are made) leaves none in results. At teardown the
keys are removed, the public files (configs, certificates) are copied back into
results in place of the link, and the scratch directory is wiped. The run's
scratch directory records its owner (labels.py), so `clean` wipes those of runs
whose owner is gone, and also scrubs the keys an older vnetbench left in results.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

OWNER_FILE = "owner"  # in a run's scratch directory: the owner label of the run


def scratch_root() -> Path:
    """Every run's scratch directory is under here: $VNETBENCH_SCRATCH, else
    $XDG_RUNTIME_DIR/vnetbench (a tmpfs only this user reads), else a directory of this
    user's in the system's temporary directory."""
    if os.environ.get("VNETBENCH_SCRATCH"):
        return Path(os.environ["VNETBENCH_SCRATCH"])
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and Path(runtime).is_dir():
        return Path(runtime) / "vnetbench"
    return Path(tempfile.gettempdir()) / f"vnetbench-{os.getuid()}"


def private_directory(path: Path) -> Path:
    """path made (and its missing parents), readable by this user only."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    path.chmod(0o700)
    return path


def run_scratch(run_id: str, root: Path | None = None) -> Path:
    return (root or scratch_root()) / run_id


def stack_scratch(run_id: str, stack_dir: Path, owner: str, root: Path | None = None) -> Path:
    """The scratch directory of one stack of a run (a run may bring up several), made
    now, with the run's owner recorded beside it."""
    run_dir = private_directory(run_scratch(run_id, root))
    (run_dir / OWNER_FILE).write_text(owner + "\n")
    digest = hashlib.sha256(str(stack_dir.resolve()).encode()).hexdigest()[:12]
    return private_directory(run_dir / f"{stack_dir.name}-{digest}")


def link_secret_dirs(stack_dir: Path, scratch: Path, names: Iterable[str]) -> None:
    """Each of the overlay's file folders of stack_dir becomes a link to its folder
    in scratch (a folder rendered before, in place, is removed first)."""
    stack_dir.mkdir(parents=True, exist_ok=True)
    for name in names:
        target = scratch / name
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(mode=0o755)
        link = stack_dir / name
        if link.is_symlink() or link.is_file():
            link.unlink()
        elif link.is_dir():
            shutil.rmtree(link)
        link.symlink_to(target, target_is_directory=True)


def scratch_links(stack_dir: Path, root: Path | None = None) -> list[Path]:
    """The links of stack_dir into the scratch root (dangling ones too)."""
    base = os.path.realpath(root or scratch_root())
    if not stack_dir.is_dir():
        return []
    return sorted(path for path in stack_dir.iterdir() if path.is_symlink()
                  and os.path.realpath(os.readlink(path)).startswith(base + os.sep))


def release_stack_scratch(stack_dir: Path, keep_public: bool = True,
                          root: Path | None = None) -> list[Path]:
    """Each scratch link of stack_dir replaced by a copy of what it points to, less every
    file still holding a private key (`keep_public`; call it once the overlay's keys
    are removed), then the scratch folders deleted, and the run's scratch directory
    once no stack of it is left; the links handled. Deleting happens even when a copy
    fails (the copy's error goes on after)."""
    links = scratch_links(stack_dir, root)
    targets = [Path(os.readlink(link)) for link in links]
    try:
        for link, target in zip(links, targets, strict=True):
            link.unlink()
            if keep_public and target.is_dir():
                shutil.copytree(target, link, symlinks=True, ignore=_private_ones)
    finally:
        for stack_scratch_dir in {target.parent for target in targets}:
            shutil.rmtree(stack_scratch_dir, ignore_errors=True)
            run_dir = stack_scratch_dir.parent
            if run_dir.is_dir() and not [p for p in run_dir.iterdir() if p.name != OWNER_FILE]:
                shutil.rmtree(run_dir, ignore_errors=True)
    return links


def _private_ones(directory: str, names: list[str]) -> set[str]:
    return {name for name in names if holds_private_key(Path(directory) / name)}


@dataclass(frozen=True)
class ScratchRun:
    """A run's scratch directory as `clean` finds it."""

    run_id: str
    path: Path
    owner: str | None


def scratch_runs(root: Path | None = None) -> list[ScratchRun]:
    base = root or scratch_root()
    if not base.is_dir():
        return []
    found = []
    for path in sorted(base.iterdir()):
        if path.is_dir() and not path.is_symlink():
            try:
                owner: str | None = (path / OWNER_FILE).read_text().strip() or None
            except OSError:
                owner = None
            found.append(ScratchRun(path.name, path, owner))
    return found


def wipe_run_scratch(run: ScratchRun) -> None:
    shutil.rmtree(run.path, ignore_errors=True)


# -- what a crash left in results directories ---------------------------------------

PEM_PRIVATE = re.compile(rb"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----")
WIREGUARD_PRIVATE = re.compile(  # 32 bytes in base64: 43 characters and "="
    rb"^[ \t]*PrivateKey[ \t]*=[ \t]*[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=", re.MULTILINE)
SCANNED_BYTES = 1 << 20  # keys and configs are small; a large file is results data


def holds_private_key(path: Path) -> bool:
    """Does this file hold a private key: PEM (tinc, OpenVPN, Nebula, the TLS of a run)
    or WireGuard's base64 one? Links are not followed, large files not read."""
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > SCANNED_BYTES:
            return False
        data = path.read_bytes()
    except OSError:
        return False
    return bool(PEM_PRIVATE.search(data) or WIREGUARD_PRIVATE.search(data))


def private_keys_under(results: Path) -> list[Path]:
    """Every file under a results directory that holds a private key (links into a
    scratch directory are not followed: `clean` wipes those apart)."""
    if not results.is_dir():
        return []
    found = []
    for directory, subdirs, files in os.walk(results):
        found += [Path(directory) / name for name in files
                  if holds_private_key(Path(directory) / name)]
        subdirs.sort()
    return sorted(found)
