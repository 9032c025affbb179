"""The room server's TLS key per pass: made in the run's scratch directory, owner-only,
mounted read-only where the tools image's nginx reads it, and gone when the pass
ends, however it ends (nothing of it in results, no key left behind)."""

from __future__ import annotations

import stat
from pathlib import Path
from types import SimpleNamespace

import pytest

from vnetbench.model.topology import parse_topology
from vnetbench.runtime.scratch import OWNER_FILE, holds_private_key
from vnetbench.scenarios import get_scenario
from vnetbench.scenarios.room.tls import TLS_DIR, server_tls, tls_url


def test_the_key_is_private_mounted_read_only_and_gone_after_the_pass(tmp_path: Path) -> None:
    root, results = tmp_path / "scratch", tmp_path / "results"
    with server_tls("run1", results, "p-room-1-server", root) as mount:
        assert mount.target == TLS_DIR and mount.read_only
        assert mount.source.is_relative_to(root / "run1")
        key, cert = mount.source / "server.key", mount.source / "server.pem"
        assert holds_private_key(key) and stat.S_IMODE(key.stat().st_mode) == 0o600
        assert cert.is_file() and not holds_private_key(cert)
        assert (root / "run1" / OWNER_FILE).is_file()
    assert not (root / "run1").exists()  # nothing else of the run's: its directory goes
    assert not results.exists()  # nothing written in results


def test_an_interrupted_pass_removes_the_key_and_leaves_other_stacks_scratch(
        tmp_path: Path) -> None:
    root = tmp_path / "scratch"
    other = root / "run1" / "wireguard-0123"
    other.mkdir(parents=True)
    with pytest.raises(KeyboardInterrupt), server_tls("run1", tmp_path, "s", root) as mount:
        raise KeyboardInterrupt
    assert not mount.source.exists() and other.is_dir()


def test_the_https_url_is_the_http_one_s_address_on_the_tls_port() -> None:
    assert tls_url("http://10.1.2.3:8080") == "https://10.1.2.3:8443"
    assert tls_url("http://[fd00::5]:8080") == "https://[fd00::5]:8443"


def test_https_on_several_hosts_is_not_run_and_no_key_is_made(tmp_path: Path) -> None:
    """The key's directory is this machine's: with the stack on several hosts the pass
    says why it did not run, before any key or probe is made."""
    topology = parse_topology({"name": "t", "switches": 2, "agents": 2,
                               "workload": "contest-https", "settings": {"machines": 2}}, "t")
    stack = SimpleNamespace(rendered=SimpleNamespace(project="p", directory=tmp_path),
                            run_id="r", placement_settings=lambda: {"hosts": "a; b"})
    context = SimpleNamespace(stack=stack, topology=topology, plan=None,
                              overlay=SimpleNamespace(target_address=lambda *_: "10.0.0.9"))
    result = get_scenario("room").run_pass(context, 1)  # type: ignore[arg-type]
    assert result.metrics == {}
    assert "asks over HTTPS" in str(result.outcome) and "Run it on one host" in str(
        result.outcome)
    assert list(tmp_path.iterdir()) == []
