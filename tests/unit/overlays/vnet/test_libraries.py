"""Soname -> Debian package lookup for the vNet runtime image, on recorded real output."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from vnetbench.engines.base import ToolOutput, ToolSpec
from vnetbench.errors import UserError
from vnetbench.overlays.vnet.libraries import (
    find_packages,
    parse_contents,
    parse_ldd,
    parse_search,
    policy_name,
    rank_candidates,
    search_pattern,
    ships_library,
    split_soname,
)

DATA = Path(__file__).resolve().parents[3] / "data" / "vnet-libraries"


def text(name: str) -> str:
    return (DATA / name).read_text()


def test_ldd_in_the_base_image_names_the_missing_library_once() -> None:
    report = parse_ldd(text("ldd-base-trixie.txt"))
    assert report.missing == ["libprotobuf.so.32"]
    assert report.resolved["libstdc++.so.6"] == "/lib/x86_64-linux-gnu/libstdc++.so.6"
    assert "linux-vdso.so.1" not in report.resolved
    assert report.versions_missing == []


def test_ldd_on_an_older_host_reports_missing_symbol_versions_too() -> None:
    report = parse_ldd(text("ldd-host-bookworm-agent.txt"))
    assert report.missing == ["libprotobuf.so.32"]
    assert report.versions_missing == ["GLIBCXX_3.4.32", "GLIBC_2.38"]
    assert set(report.resolved) == {"libstdc++.so.6", "libgcc_s.so.1", "libc.so.6", "libm.so.6"}


@pytest.mark.parametrize(("soname", "split", "package"), [
    ("libprotobuf.so.32", ("libprotobuf", "32"), "libprotobuf32"),
    ("libssl.so.3", ("libssl", "3"), "libssl3"),
    ("libstdc++.so.6", ("libstdc++", "6"), "libstdc++6"),
    ("libdb-5.3.so", ("libdb-5.3", ""), "libdb-5.3"),
    ("libfoo2.so.3", ("libfoo2", "3"), "libfoo2-3"),
    ("libGL_x.so.1", ("libGL_x", "1"), "libgl-x1"),
    ("not-a-library", ("", ""), ""),
])
def test_debian_policy_names_a_library_package_after_its_soname(
        soname: str, split: tuple[str, str], package: str) -> None:
    assert split_soname(soname) == split
    assert policy_name(soname) == package


def test_search_pattern_escapes_extended_regex_characters() -> None:
    assert search_pattern("libprotobuf.so.32") == "^libprotobuf"
    assert search_pattern("libstdc++.so.6") == r"^libstdc\+\+"
    assert search_pattern("libdb-5.3.so") == r"^libdb-5\.3"


def test_candidates_put_the_t64_package_first_and_skip_dev_and_bindings() -> None:
    names = parse_search(text("apt-cache-search-libprotobuf.txt"))
    assert "libprotobuf32t64" in names and "libprotobuf-dev" in names
    assert rank_candidates("libprotobuf.so.32", names) == [
        "libprotobuf32t64", "libprotobuf-lite32t64"]
    ssl = parse_search(text("apt-cache-search-libssl.txt"))
    assert rank_candidates("libssl.so.3", ssl) == ["libssl3t64"]
    assert rank_candidates("libssl.so.3", ["libssl3", "libssl3t64"])[0] == "libssl3"


def test_dpkg_contents_confirm_only_the_package_that_ships_the_soname() -> None:
    full = parse_contents(text("dpkg-c-libprotobuf32t64.txt"))
    lite = parse_contents(text("dpkg-c-libprotobuf-lite32t64.txt"))
    assert "/usr/lib/x86_64-linux-gnu/libprotobuf.so.32" in full  # a symlink, target cut
    assert ships_library(full, "libprotobuf.so.32")
    assert not ships_library(lite, "libprotobuf.so.32")
    assert ships_library(lite, "libprotobuf-lite.so.32")
    # Outside the loader's directories a library does not count.
    assert not ships_library(["/usr/lib/x86_64-linux-gnu/private/libx.so.1"], "libx.so.1")
    assert ships_library(["/lib/libx.so.1"], "libx.so.1")


class FakeDocker:
    """Plays the base image: answers apt-cache search and dpkg -c from recorded output."""

    def __init__(self, contents: dict[str, str], update_fails: bool = False) -> None:
        self.contents = contents
        self.update_fails = update_fails
        self.downloads: list[str] = []
        self.removed = False
        self.started: list[ToolSpec] = []

    def start_helper(self, helper: ToolSpec) -> str:
        self.started.append(helper)
        return "lookup"

    def remove(self, container: Any) -> None:
        self.removed = True

    def execute(self, container: Any, command: list[str]) -> ToolOutput:
        script, args = command[2], command[4:]
        if script.startswith("apt-get update"):
            if self.update_fails:
                return ToolOutput(100, "E: Could not resolve deb.debian.org", "")
            return ToolOutput(0, "", "")
        if script.startswith("apt-cache search"):
            pattern = args[0]
            return ToolOutput(0, {"^libprotobuf": text("apt-cache-search-libprotobuf.txt")}.get(
                pattern, ""), "")
        self.downloads.append(args[0])
        if args[0] not in self.contents:
            return ToolOutput(100, "E: Unable to locate package", "")
        return ToolOutput(0, self.contents[args[0]], "")


def test_find_packages_downloads_candidates_until_one_ships_the_soname() -> None:
    fake = FakeDocker({"libprotobuf32t64": text("dpkg-c-libprotobuf-lite32t64.txt"),
                       "libprotobuf-lite32t64": text("dpkg-c-libprotobuf32t64.txt")})
    lookup = find_packages(fake, "base", ["libprotobuf.so.32", "libnowhere.so.7"])  # type: ignore[arg-type]
    # Contents swapped on purpose: the first candidate is rejected, the second taken.
    assert fake.downloads == ["libprotobuf32t64", "libprotobuf-lite32t64"]
    assert lookup.packages == {"libprotobuf.so.32": "libprotobuf-lite32t64"}
    assert lookup.unresolved == ["libnowhere.so.7"]
    assert lookup.to_install == ["libprotobuf-lite32t64"]
    assert fake.removed
    # one helper from the base image, kept running (removed by the lookup itself)
    assert [(h.image, h.argv, h.entrypoint, h.keep) for h in fake.started] == [
        ("base", ("sleep", "infinity"), "", True)]


def test_find_packages_needs_no_container_when_nothing_is_missing() -> None:
    fake = FakeDocker({})
    assert find_packages(fake, "base", []).to_install == []  # type: ignore[arg-type]
    assert fake.started == []


def test_an_unreachable_archive_is_a_user_error() -> None:
    fake = FakeDocker({}, update_fails=True)
    with pytest.raises(UserError, match="Debian archive must be reachable"):
        find_packages(fake, "base", ["libprotobuf.so.32"])  # type: ignore[arg-type]
    assert fake.removed
