"""Least secret exposure (issue #12): in the WireGuard, OpenVPN and tinc overlays every
container mounts only its own node's directory (and the read-only gate), so no
container can read another node's private key; keys are owner-only; after the run
remove_private_files leaves no private key in the run directory."""

from __future__ import annotations

import base64
import re
import stat
from ipaddress import IPv4Network
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
from cryptography.x509.oid import NameOID

from vnetbench.deploy.render import render_compose
from vnetbench.errors import UserError
from vnetbench.model.addressing import plan_addresses
from vnetbench.model.topology import parse_topology
from vnetbench.overlays import overlay_for
from vnetbench.overlays.base import Overlay, remove_private_files
from vnetbench.runtime.images import ImageSet

OVERLAYS = ("wireguard", "openvpn", "tinc")
PEM_KEY = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.+?-----END [A-Z ]*PRIVATE KEY-----",
                     re.DOTALL)
WG_KEY = re.compile(r"^[ \t]*PrivateKey[ \t]*=[ \t]*([A-Za-z0-9+/]{42,43}=*)[ \t]*$",
                    re.MULTILINE)
GATE = ("./gate", "/vnetbench")


class Run:
    """One overlay rendered and its files written for two switches and four agents."""

    def __init__(self, name: str, run_dir: Path) -> None:
        topology = parse_topology({"name": "secrets", "switches": 2, "agents": 4,
                                   "overlay": name}, "t.yml")
        self.name = name
        self.overlay: Overlay = overlay_for(topology)
        self.topology = self.overlay.adjust(topology).topology
        plan = plan_addresses(self.topology, "secrets", IPv4Network("10.188.0.0/16"))
        self.compose: dict[str, Any] = yaml.safe_load(
            render_compose(self.topology, self.overlay, "secrets", plan, ImageSet()))
        self.run_dir = run_dir
        self.overlay.write_files(self.topology, plan, run_dir)

    def nodes(self) -> dict[str, str]:
        """Compose service -> its own directory, as the compose file names it."""
        hubs = {f"hub-{s}": s for s in self.topology.switches}
        agents = {a.name: a.name for a in self.topology.agents}
        if self.name == "openvpn":  # its directories are named like its certificates
            return {service: f"./openvpn/{service}" for service in [*hubs, *agents]}
        return {service: f"./{self.name}/{node}" for service, node in (hubs | agents).items()}

    def mounts(self, service: str) -> list[tuple[str, str, str]]:
        """(host path, container path, mode) of a service's bind mounts."""
        volumes = self.compose["services"][service].get("volumes", [])
        return [tuple(volume.split(":")) for volume in volumes]


def keys_in(directory: Path) -> dict[Path, list[str]]:
    """Private keys (PEM blocks, WireGuard PrivateKey values) per file under directory."""
    found: dict[Path, list[str]] = {}
    for path in sorted(directory.rglob("*")):
        if path.is_file():  # not the gate's named pipe
            text = path.read_text(errors="replace")
            keys = PEM_KEY.findall(text) + WG_KEY.findall(text)
            if keys:
                found[path] = keys
    return found


def public_of(key: str) -> str:
    """The public half a peer knows the node by: WireGuard base64, or PKCS#1 PEM (tinc)
    / SubjectPublicKeyInfo PEM (OpenVPN certificates)."""
    if not key.startswith("-----"):
        private = X25519PrivateKey.from_private_bytes(base64.b64decode(key))
        return base64.b64encode(private.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw)).decode()
    loaded = serialization.load_pem_private_key(key.encode(), password=None)
    form = (serialization.PublicFormat.PKCS1 if isinstance(loaded, rsa.RSAPrivateKey)
            else serialization.PublicFormat.SubjectPublicKeyInfo)
    return loaded.public_key().public_bytes(serialization.Encoding.PEM, form).decode()


def published_as(run: Run, service: str) -> set[str]:
    """What the other nodes (or the CA) say this node's public key is."""
    home = run.run_dir / run.nodes()[service].removeprefix("./")
    if run.name == "openvpn":
        cert = x509.load_pem_x509_certificate((home / "cert.pem").read_bytes())
        ca = x509.load_pem_x509_certificate((home / "ca.pem").read_bytes())
        cert.verify_directly_issued_by(ca)
        assert cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == service
        return {cert.public_key().public_bytes(
            serialization.Encoding.PEM,
            serialization.PublicFormat.SubjectPublicKeyInfo).decode()}
    if run.name == "tinc":
        name = re.search(r"^Name = (\S+)$", (home / "tinc.conf").read_text(), re.MULTILINE)
        assert name is not None
        host = (home / "hosts" / name[1]).read_text()
        block = re.search(r"-----BEGIN RSA PUBLIC KEY-----.+?-----END RSA PUBLIC KEY-----\n",
                          host, re.DOTALL)
        assert block is not None
        return {block[0]}
    # wireguard: the PublicKey its peers (its hub, or its site's agents) list for it
    switch_of = {a.name: a.switch for a in run.topology.agents}
    peers = ([f"hub-{switch_of[service]}"] if service in switch_of
             else [a.name for a in run.topology.agents_on(service.removeprefix("hub-"))])
    listed = [set(re.findall(r"^PublicKey = (\S+)$", (run.run_dir / run.nodes()[p] / "wg0.conf")
                             .read_text(), re.MULTILINE)) for p in peers]
    assert listed
    return set.intersection(*listed)


@pytest.fixture(scope="module", params=OVERLAYS)
def run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Run:
    return Run(request.param, tmp_path_factory.mktemp(request.param))


def test_each_container_mounts_only_its_own_node_directory_and_the_gate(run: Run) -> None:
    nodes = run.nodes()
    services = {s for s in run.compose["services"] if s != "fabric"}
    assert services == set(nodes)
    for service, own in nodes.items():
        mounts = run.mounts(service)
        assert all(mode == "ro" for _, _, mode in mounts), service
        hosts = [host for host, _, _ in mounts]
        assert own in hosts, service
        for host, target, _ in mounts:
            path = (run.run_dir / host).resolve()
            assert path.is_relative_to((run.run_dir / own).resolve()) or (host, target) == GATE, (
                f"{service} mounts {host}")
    assert not run.compose["services"]["fabric"].get("volumes")
    assert keys_in(run.run_dir / "gate") == {}


def test_no_mounted_directory_holds_another_nodes_private_key(run: Run) -> None:
    """Each mounted directory holds exactly one private key, the node's own (its public
    half is what the peers or the CA know the node by), and no key is anywhere else in
    the run directory: not the CA's, not another node's."""
    seen = []
    for service in run.nodes():
        keys = [key for host, _, _ in run.mounts(service)
                for found in keys_in(run.run_dir / host).values() for key in found]
        assert len(keys) == 1, f"{service} can read {len(keys)} private keys"
        assert public_of(keys[0]) in published_as(run, service), service
        seen.append(keys[0])
    assert len(set(seen)) == len(seen)
    everywhere = [key for found in keys_in(run.run_dir).values() for key in found]
    assert sorted(everywhere) == sorted(seen)


def test_key_files_are_owner_only_and_listed_by_the_hook(run: Run) -> None:
    holding = set(keys_in(run.run_dir))
    assert holding and set(run.overlay.private_files(run.run_dir)) == holding
    for path in holding:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path


@pytest.mark.parametrize("name", OVERLAYS)
def test_remove_private_files_leaves_no_private_key(name: str, tmp_path: Path) -> None:
    run = Run(name, tmp_path)
    holding = set(keys_in(tmp_path))
    removed = remove_private_files(run.overlay, tmp_path)
    assert set(removed) == holding
    for path in tmp_path.rglob("*"):
        if path.is_file():
            text = path.read_text(errors="replace")
            assert "PRIVATE KEY" not in text and not WG_KEY.search(text), path
    assert remove_private_files(run.overlay, tmp_path) == []  # nothing left to remove
    if name == "wireguard":  # redacted, not deleted: the peers stay readable
        for conf in removed:
            text = conf.read_text()
            assert "PrivateKey = (removed after the run)" in text and "[Peer]" in text
            assert stat.S_IMODE(conf.stat().st_mode) == 0o644
    else:
        assert not any(path.exists() for path in removed)
    if name == "openvpn":  # the public material stays
        assert (tmp_path / "openvpn" / "agent1" / "cert.pem").exists()


def test_remove_private_files_tries_every_file_and_names_those_it_could_not(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = Run("tinc", tmp_path)
    stuck = run.overlay.private_files(tmp_path)[0]
    delete = run.overlay.remove_private

    def refuse(path: Path) -> None:
        if path == stuck:
            raise PermissionError(13, "Permission denied")
        delete(path)

    monkeypatch.setattr(run.overlay, "remove_private", refuse)
    with pytest.raises(UserError, match=re.escape(str(stuck))):
        remove_private_files(run.overlay, tmp_path)
    assert set(keys_in(tmp_path)) == {stuck}
