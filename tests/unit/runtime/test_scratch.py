"""A run's keys never enter its results directory, however the run ends: they are made
in its scratch directory, linked from the run directory, wiped at teardown and by
`clean`, which also scrubs the keys an earlier crash left in results."""

from __future__ import annotations

from ipaddress import IPv4Network
from pathlib import Path
from types import SimpleNamespace

import pytest

from vnetbench.commands.clean import kept_runs, scratch_and_results, scrub_results
from vnetbench.deploy import lifecycle
from vnetbench.deploy.lifecycle import Prepared, StackSpec
from vnetbench.deploy.render import render_run
from vnetbench.engines.facts import EngineFacts
from vnetbench.model.topology import parse_topology
from vnetbench.overlays import overlay_for
from vnetbench.overlays.keys import tinc_keypair, wireguard_keypair
from vnetbench.runs.session import new_run_directory
from vnetbench.runtime import scratch
from vnetbench.runtime.images import ImageSet
from vnetbench.runtime.labels import current_owner
from vnetbench.runtime.rundir import (
    RUN_MARKER,
    mark_run_directory,
    marked_run_directories,
    new_directory,
    run_marker,
)
from vnetbench.runtime.scratch import holds_private_key, private_keys_under

BLOCK = IPv4Network("10.188.0.0/16")


@pytest.fixture(autouse=True)
def scratch_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "scratch"
    monkeypatch.setenv("VNETBENCH_SCRATCH", str(root))
    return root


def topology(overlay: str):  # type: ignore[no-untyped-def]
    return parse_topology({"name": "keys", "switches": 2, "agents": 3, "overlay": overlay},
                          "t.yml")


@pytest.mark.parametrize("name", ["wireguard", "tinc", "openvpn", "nebula"])
def test_keys_are_made_in_scratch_and_only_public_files_come_back(
        name: str, tmp_path: Path, scratch_root: Path) -> None:
    plan_topology = topology(name)
    overlay = overlay_for(plan_topology)
    stack_dir = tmp_path / "results" / "run" / "throughput"
    place = scratch.stack_scratch("run-1", stack_dir, current_owner())
    render_run(overlay.adjust(plan_topology).topology, overlay, "run-1", BLOCK, stack_dir,
               scratch=place)
    assert private_keys_under(tmp_path / "results") == []
    assert [link.name for link in scratch.scratch_links(stack_dir)] == list(overlay.secret_dirs)
    if name != "nebula":  # nebula's keys are made by its CA service, once up
        assert overlay.private_files(stack_dir)  # the containers find their keys
    lifecycle.forget_private_keys(overlay, stack_dir)
    assert not scratch_root.joinpath("run-1").exists()
    assert (stack_dir / overlay.secret_dirs[0]).is_dir()
    assert not (stack_dir / overlay.secret_dirs[0]).is_symlink()
    assert private_keys_under(tmp_path / "results") == []
    assert overlay.private_files(stack_dir) == []


def test_an_interrupt_while_tinc_s_keys_are_made_leaves_none(
        tmp_path: Path, scratch_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The issue's case: Ctrl-C while tinc's keys were written left rsa_key.priv files."""
    from vnetbench.overlays import tinc

    written = []

    def interrupted(path: Path, data: str | bytes) -> Path:
        if len(written) == 3:
            raise KeyboardInterrupt
        written.append(path)
        return scratch_write(path, data)

    scratch_write = tinc.write_private
    monkeypatch.setattr(tinc, "write_private", interrupted)
    monkeypatch.setattr(lifecycle, "engine_facts", EngineFacts)
    plan_topology = topology("tinc")
    overlay = overlay_for(plan_topology)
    prepared = Prepared(plan_topology, overlay, None, ImageSet())  # type: ignore[arg-type]
    results = tmp_path / "results"
    spec = StackSpec(prepared, "run-2", results / "run-2" / "throughput", current_owner())
    with pytest.raises(KeyboardInterrupt):
        lifecycle.made_stack(spec, BLOCK)
    assert len(written) == 3  # keys were being written when the interrupt came
    assert list(results.rglob("rsa_key.priv")) == [] and private_keys_under(results) == []
    assert not scratch_root.joinpath("run-2").exists()  # and the scratch is gone at once


@pytest.mark.parametrize("name", ["baseline", "wireguard"])
def test_a_stack_leaves_no_scratch_behind_once_torn_down(
        name: str, tmp_path: Path, scratch_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The baseline has no keys: a scratch directory made for it had no link, so no
    teardown ever found it (39 runs' empty ones were left by one integration suite)."""
    monkeypatch.setattr(lifecycle, "engine_facts", EngineFacts)
    monkeypatch.setattr(lifecycle, "Stack", lambda rendered, *_: SimpleNamespace(
        rendered=rendered))  # the rendered stack, not brought up
    plan_topology = topology(name)
    overlay = overlay_for(plan_topology)
    prepared = Prepared(overlay.adjust(plan_topology).topology, overlay, None,  # type: ignore[arg-type]
                        ImageSet())
    spec = StackSpec(prepared, "run-3", tmp_path / "results" / "run-3" / "throughput",
                     current_owner())
    stack = lifecycle.made_stack(spec, BLOCK)
    assert scratch_root.joinpath("run-3").exists() == bool(overlay.secret_dirs)
    lifecycle.forget_private_keys(overlay, stack.rendered.directory)
    assert not scratch_root.joinpath("run-3").exists()


def old_crash(stack_dir: Path) -> list[Path]:
    """What an older vnetbench killed mid-run left: keys inside the run directory."""
    (stack_dir / "compose.yml").parent.mkdir(parents=True)
    (stack_dir / "compose.yml").write_text("services: {}\n")
    rsa = stack_dir / "tinc" / "hub" / "rsa_key.priv"
    rsa.parent.mkdir(parents=True)
    rsa.write_text(tinc_keypair(1024)[0])
    conf = stack_dir / "wireguard" / "a1" / "wg0.conf"
    conf.parent.mkdir(parents=True)
    conf.write_text(f"[Interface]\nPrivateKey = {wireguard_keypair()[0]}\nListenPort = 1\n")
    return [rsa, conf]


def gone() -> str:
    """The owner of a vnetbench process of this host that is no more."""
    return f"{_host()}:999999999:1"


def test_clean_scrubs_the_keys_an_earlier_crash_left_in_results(tmp_path: Path) -> None:
    results = tmp_path / "results"
    rsa, conf = old_crash(results / "old-run" / "throughput")
    mark_run_directory(results / "old-run", gone())  # its process gone
    stray = results / "old-run" / "throughput" / "openvpn" / "x" / "node.key"
    stray.parent.mkdir(parents=True)
    stray.write_text(PEM_KEY)
    assert len(private_keys_under(results)) == 3
    scrubbed = scrub_results(results)
    assert set(scrubbed.removed) == {rsa, conf, stray} and scrubbed.left == []
    assert private_keys_under(results) == [] and not rsa.exists()
    assert "ListenPort = 1" in conf.read_text()  # WireGuard's config kept, redacted


PEM_KEY = "-----BEGIN PRIVATE KEY-----\nMIG\n-----END PRIVATE KEY-----\n"


def user_keys(results: Path) -> list[Path]:
    """A user's own keys under the --results clean is given (results=$HOME, say)."""
    keys = [results / ".ssh" / "id_ed25519", results / "id_rsa",
            results / "work" / "server.key"]
    for key in keys:
        key.parent.mkdir(parents=True, exist_ok=True)
        key.write_text(PEM_KEY.replace("PRIVATE", "OPENSSH PRIVATE"))
    return keys


def test_clean_leaves_a_key_outside_its_marked_run_directories_and_names_it(
        tmp_path: Path) -> None:
    """clean --results ~ deleted every file holding a PEM private key, a user's SSH keys
    with them: now only what lies in a run directory vnetbench marked is its own."""
    results = tmp_path / "home"
    mine = user_keys(results)
    unmarked = old_crash(results / "before-the-marker" / "throughput")  # proven by nothing
    crashed = old_crash(results / "crashed" / "throughput")
    mark_run_directory(results / "crashed", gone())
    scrubbed = scrub_results(results)
    assert all(key.exists() for key in mine + unmarked)
    assert not crashed[0].exists() and set(scrubbed.removed) == set(crashed)
    assert set(scrubbed.left) == set(mine + unmarked)
    said = scrubbed.said(results)
    assert len(said) == 2 and "removed 2 private key file(s)" in said[0]
    assert said[1].startswith("left 5 file(s) holding a private key")
    assert all(str(key) in said[1] for key in mine + unmarked)


@pytest.mark.parametrize("forge", ["link", "another name", "not json", "no owner",
                                   "a directory"])
def test_only_a_marker_vnetbench_wrote_for_the_directory_proves_it(
        tmp_path: Path, forge: str) -> None:
    run_dir = tmp_path / "results" / "run-1"
    rsa, _ = old_crash(run_dir / "throughput")
    elsewhere = tmp_path / "marked"
    elsewhere.mkdir()
    mark_run_directory(elsewhere, gone())
    marker = run_dir / RUN_MARKER
    if forge == "link":
        marker.symlink_to(elsewhere / RUN_MARKER)
    elif forge == "another name":
        marker.write_text((elsewhere / RUN_MARKER).read_text())
    elif forge == "not json":
        marker.write_text("vnetbench run directory\n")
    elif forge == "no owner":
        marker.write_text('{"kind": "vnetbench run directory", "name": "run-1"}')
    else:
        marker.mkdir()
    assert run_marker(run_dir) is None
    assert scrub_results(tmp_path / "results").removed == [] and rsa.exists()


def test_a_run_in_progress_and_a_link_out_of_a_run_directory_are_left(
        tmp_path: Path) -> None:
    results = tmp_path / "results"
    live = old_crash(results / "live" / "throughput")
    mark_run_directory(results / "live")  # this process: alive
    mine = user_keys(tmp_path / "home")
    (results / "gone").mkdir()
    mark_run_directory(results / "gone", gone())
    (results / "gone" / "home").symlink_to(tmp_path / "home")  # a link is not followed
    scrubbed = scrub_results(results)
    assert scrubbed.removed == [] and scrubbed.left == []
    assert scrubbed.running == [results / "live"]
    assert all(key.exists() for key in live + mine)
    assert "still runs" in scrubbed.said(results)[0]


def test_every_new_run_directory_is_marked_as_it_is_made(tmp_path: Path) -> None:
    made = [new_directory(tmp_path, "two-sites-20261130-054833-compare"),
            new_directory(tmp_path, "two-sites-20261130-054833-compare"),
            new_run_directory(topology("wireguard"), tmp_path / "up")[1]]
    for directory in made:
        marker = run_marker(directory)
        assert marker is not None and marker.name == directory.name
        assert marker.owner == current_owner()
    assert marked_run_directories(tmp_path) == sorted(made)


def test_clean_leaves_a_live_run_s_links_and_scratch_alone(tmp_path: Path) -> None:
    results = tmp_path / "results"
    stack_dir = results / "live" / "throughput"
    place = scratch.stack_scratch("live-1", stack_dir, current_owner())
    overlay = overlay_for(topology("tinc"))
    render_run(topology("tinc"), overlay, "live-1", BLOCK, stack_dir, scratch=place)
    mark_run_directory(results / "live", gone())  # its links say it is this version's
    keys = overlay.private_files(stack_dir)
    scrubbed = scrub_results(results)
    assert keys and scrubbed.removed == [] and scrubbed.left == []
    assert scratch_and_results({"live-1"}, set(), False, results) == []
    assert all(key.exists() for key in keys)


def test_clean_wipes_the_scratch_of_runs_removed_or_whose_owner_is_gone(
        tmp_path: Path, scratch_root: Path) -> None:
    results = tmp_path / "results"
    for run_id, owner in [("killed", "nohost-but-here:999999999:1"), ("removed", "x:1:1"),
                          ("alive", current_owner()), ("up", "detached:vnetbench up")]:
        scratch.stack_scratch(run_id, results / run_id, owner)
    scratch.stack_scratch("killed", results / "killed", gone())
    said = scratch_and_results(set(), {"removed"}, False, results)
    assert sorted(p.name for p in scratch_root.iterdir()) == ["alive", "up"]
    assert "killed" in said[0] and "removed" in said[0]


def _host() -> str:
    return current_owner().split(":")[0]


def test_clean_names_the_way_to_remove_a_run_it_cannot_judge() -> None:
    said = kept_runs(["r1", "r2"], ["r2"])
    assert "another PID namespace" in said and "vnetbench clean --run RUN_ID" in said
    assert "(r2)" in said and kept_runs([], []) == ""


def test_a_private_key_is_told_from_public_files(tmp_path: Path) -> None:
    files = {"pem": tinc_keypair(1024)[0], "wg": f"PrivateKey = {wireguard_keypair()[0]}\n",
             "public": tinc_keypair(1024)[1], "redacted": "PrivateKey = (removed after the run)\n",
             "wgpublic": f"PublicKey = {wireguard_keypair()[1]}\n"}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    assert [name for name in files if holds_private_key(tmp_path / name)] == ["pem", "wg"]
