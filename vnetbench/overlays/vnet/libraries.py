"""Which package of the base image's distribution ships a shared library (soname -> package).

`vnetbench images vnet --programs DIR` installs a library the programs need and the
base image lacks from the base distribution's own packages (they match its glibc).
The lookup runs in a container from the base image, without apt-file (its Contents
indexes are about 50 MB for Debian 13, and this machine's archive mirror does not
serve them): candidate packages are derived from the soname by Debian's library
package naming (policy 8.1: libfoo.so.3 -> libfoo3, libfoo2.so.3 -> libfoo2-3, plus
suffixes such as t64) and found with `apt-cache search --names-only`; a candidate is
taken only once `apt-get download` + `dpkg -c` show it ships the soname in a library
directory. Parsing and choosing are pure functions; `find_packages` runs Docker.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from vnetbench.engines.base import HostRuntime, ToolSpec
from vnetbench.errors import EnvironmentProblem
from vnetbench.runtime.labels import helper_labels
from vnetbench.terminal.ui import waiting

NOT_FOUND = re.compile(r"^\s*(\S+) => not found", re.MULTILINE)
RESOLVED = re.compile(r"^\s*(\S+) => (/\S+) \(", re.MULTILINE)
VERSION_MISSING = re.compile(r"version `([^']+)' not found", re.MULTILINE)
SONAME = re.compile(r"^(?P<name>[^/]+?)\.so(?:\.(?P<version>[0-9][0-9.]*))?$")
# Directories the dynamic loader searches without configuration.
LIBRARY_DIR = re.compile(r"^/(usr/)?lib(64|32|/[a-z0-9_]+-linux-[a-z0-9_]+)?$")
# Packages that never hold the runtime library itself.
NOT_RUNTIME = re.compile(r"-(dev|dbg|dbgsym|doc|bin|tools|utils|common|java|ocaml|perl|"
                         r"python3?|ruby|tcl|lua|cil|gir\S*)(-|$)")
ERE_SPECIAL = set(".[]()*+?{}|^$\\")
MAX_CANDIDATES = 5


@dataclass(frozen=True)
class LddReport:
    """What ldd said: resolved soname -> path, sonames not found, symbol versions missing."""

    resolved: dict[str, str] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    versions_missing: list[str] = field(default_factory=list)


def parse_ldd(output: str) -> LddReport:
    """Parse the (possibly concatenated) output of ldd on one or more programs."""
    return LddReport(
        resolved=dict(RESOLVED.findall(output)),
        missing=sorted(set(NOT_FOUND.findall(output))),
        versions_missing=sorted(set(VERSION_MISSING.findall(output))),
    )


def split_soname(soname: str) -> tuple[str, str]:
    """'libprotobuf.so.32' -> ('libprotobuf', '32'); ('', '') when it is no soname."""
    match = SONAME.match(soname)
    if not match:
        return "", ""
    return match["name"], match["version"] or ""


def policy_name(soname: str) -> str:
    """The package name Debian policy 8.1 derives from a soname (before any t64 suffix)."""
    name, version = split_soname(soname)
    if not name:
        return ""
    if version and name[-1].isdigit():
        name += "-"
    return (name + version).lower().replace("_", "-")


def search_pattern(soname: str) -> str:
    """The regular expression (POSIX ERE) for `apt-cache search --names-only`."""
    name, _ = split_soname(soname)
    stem = name.lower().replace("_", "-")
    return "^" + "".join(f"\\{c}" if c in ERE_SPECIAL else c for c in stem)


def parse_search(output: str) -> list[str]:
    """Package names from `apt-cache search` output ('name - description' lines)."""
    return [line.split(" - ", 1)[0].strip() for line in output.splitlines()
            if " - " in line]


def rank_candidates(soname: str, names: Iterable[str]) -> list[str]:
    """Packages worth downloading to look for the soname, likeliest first.

    First the policy name itself, then the policy name with a suffix (libprotobuf32t64),
    then other packages of the same library carrying its version (libprotobuf-lite32t64).
    """
    exact = policy_name(soname)
    stem, version = split_soname(soname)
    stem = stem.lower().replace("_", "-")
    if not exact:
        return []
    ranked: list[tuple[int, int, str]] = []
    for name in set(names):
        if NOT_RUNTIME.search(name[len(stem):]) or not name.startswith(stem):
            continue
        if name == exact:
            rank = 0
        elif name.startswith(exact):
            rank = 1
        elif version in name[len(stem):]:
            rank = 2
        else:
            continue
        ranked.append((rank, len(name), name))
    return [name for _, _, name in sorted(ranked)][:MAX_CANDIDATES]


def parse_contents(output: str) -> list[str]:
    """Absolute paths from `dpkg -c` output (symlinks without their target)."""
    paths = []
    for line in output.splitlines():
        fields = line.split(None, 5)
        if len(fields) < 6:
            continue
        path = fields[5].split(" -> ", 1)[0]
        paths.append("/" + path.removeprefix("./").rstrip("/"))
    return paths


def ships_library(paths: Iterable[str], soname: str) -> bool:
    """Does a package with these files put the soname where the loader finds it?"""
    return any(PurePosixPath(p).name == soname and LIBRARY_DIR.match(str(PurePosixPath(p).parent))
               for p in paths)


@dataclass
class PackageLookup:
    """The outcome of a lookup: soname -> package, and the sonames no package ships."""

    packages: dict[str, str] = field(default_factory=dict)
    unresolved: list[str] = field(default_factory=list)

    @property
    def to_install(self) -> list[str]:
        return sorted(set(self.packages.values()))


class CommandFailed(Exception):
    """A command in the lookup container exited non-zero (its output attached)."""

    def __init__(self, stdout: str) -> None:
        super().__init__(stdout)
        self.stdout = stdout


def _run(runtime: HostRuntime, container: str, script: str, *args: str) -> str:
    done = runtime.execute(container, ["sh", "-c", script, "sh", *args])
    if done.exit_code != 0:
        raise CommandFailed(done.stdout + done.stderr)
    return done.stdout


def find_packages(runtime: HostRuntime, base: str, sonames: list[str]) -> PackageLookup:
    """Look up, inside a container from the base image, which package ships each soname."""
    lookup = PackageLookup()
    if not sonames:
        return lookup
    with waiting(f"finding the packages of {base} that ship {', '.join(sonames)}"):
        _lookup(runtime, base, sonames, lookup)
    return lookup


def _lookup(runtime: HostRuntime, base: str, sonames: list[str],
            lookup: PackageLookup) -> None:
    container = runtime.start_helper(ToolSpec(
        ("sleep", "infinity"), helper_labels("vnet-libraries", "local"), image=base,
        entrypoint="", keep=True))
    try:
        try:
            _run(runtime, container, "apt-get update -qq 2>&1")
        except CommandFailed as error:
            raise EnvironmentProblem(
                f"Looking up the Debian packages that ship {', '.join(sonames)} failed: "
                f"'apt-get update' in {base} said {(error.stdout or '').strip()[-300:]!r}. "
                "The Debian archive must be reachable to build the vNet runtime image."
            ) from None
        for soname in sonames:
            names = parse_search(_run(runtime, container,
                                      'apt-cache search --names-only "$1"',
                                      search_pattern(soname)))
            for candidate in rank_candidates(soname, names):
                script = ('d=$(mktemp -d) && cd "$d" && apt-get download -qq "$1" >/dev/null '
                          '2>&1 && dpkg -c ./*.deb; rc=$?; rm -rf "$d"; exit $rc')
                try:
                    contents = _run(runtime, container, script, candidate)
                except CommandFailed:
                    continue
                if ships_library(parse_contents(contents), soname):
                    lookup.packages[soname] = candidate
                    break
            else:
                lookup.unresolved.append(soname)
    finally:
        runtime.remove(container)
