"""encryption: false, a generic setting: each overlay turns its encryption off where it
can, and refuses with its reason where it cannot."""

from __future__ import annotations

from ipaddress import IPv4Network
from pathlib import Path

import pytest

from vnetbench.core.outcome import Applicable, Unsupported
from vnetbench.errors import UserError
from vnetbench.model.addressing import plan_addresses
from vnetbench.model.topology import Topology, parse_topology
from vnetbench.overlays import OVERLAY_NAMES, overlay_for

BLOCK = IPv4Network("10.189.0.0/16")


def topology(overlay: str, **settings: object) -> Topology:
    return parse_topology({"name": "t", "overlay": overlay, "switches": 2, "agents": 2,
                           "settings": settings}, "t.yml", overlays=OVERLAY_NAMES)


@pytest.mark.parametrize(("overlay", "reason"), [
    ("wireguard", "WireGuard has no null cipher"),
    ("nebula", "Nebula has no null cipher"),
])
def test_overlays_that_always_encrypt_refuse_with_their_reason(overlay: str,
                                                               reason: str) -> None:
    plain = topology(overlay, encryption=False)
    refused = overlay_for(plain).encryption_applicability(plain)
    assert isinstance(refused, Unsupported) and reason in refused.status
    default = topology(overlay)
    assert isinstance(overlay_for(default).encryption_applicability(default), Applicable)


def test_openvpn_turns_its_data_channel_cipher_off(tmp_path: Path) -> None:
    plain = topology("openvpn", encryption=False)
    adapter = overlay_for(plain)
    assert isinstance(adapter.encryption_applicability(plain), Applicable)
    adapter.write_files(plain, plan_addresses(plain, "t", BLOCK), tmp_path)
    configs = [p.read_text() for p in tmp_path.rglob("*.conf")]
    assert configs and all("cipher none" in c and "data-ciphers none" in c for c in configs)
    adapter.write_files(topology("openvpn"), plan_addresses(plain, "t", BLOCK), tmp_path / "e")
    assert not any("cipher none" in p.read_text() for p in (tmp_path / "e").rglob("*.conf"))


def test_tinc_goes_unencrypted_over_udp_and_says_so(tmp_path: Path) -> None:
    plain = topology("tinc", encryption=False)
    adapter = overlay_for(plain)
    assert isinstance(adapter.settings_applicability(plain), Applicable)
    assert "over UDP with Cipher = none" in adapter.adjust(plain).remark
    adapter.write_files(plain, plan_addresses(plain, "t", BLOCK), tmp_path)
    assert all("TCPOnly = no" in p.read_text() for p in tmp_path.rglob("tinc.conf"))
    hosts = [p.read_text() for p in tmp_path.rglob("hosts/*")]
    assert hosts and all("Cipher = none" in h and "Digest = none" in h for h in hosts)
    default = topology("tinc")
    adapter.write_files(default, plan_addresses(default, "t", BLOCK), tmp_path / "e")
    assert all("TCPOnly = yes" in p.read_text() for p in (tmp_path / "e").rglob("tinc.conf"))
    assert not adapter.adjust(default).remark


def test_vnet_without_encryption_runs_without_tls() -> None:
    plain = topology("vnet", encryption=False)
    assert overlay_for(plain).adjust(plain).topology.settings.tls is False


def test_tls_on_and_encryption_off_contradict_and_true_is_the_default() -> None:
    with pytest.raises(UserError, match="contradict"):
        topology("vnet", encryption=False, tls=True)
    with pytest.raises(UserError, match="encryption: true is every overlay's default"):
        topology("openvpn", encryption=True)


def test_up_and_the_plugin_refuse_what_runs_refuse() -> None:
    plain = topology("wireguard", encryption=False)
    with pytest.raises(UserError, match="Leave encryption on for wireguard"):
        overlay_for(plain).require_supported_settings(plain)
    overlay_for(topology("wireguard")).require_supported_settings(topology("wireguard"))
