"""Throwaway TLS material per run: one CA and one certificate per role.

Keys are written owner-readable only (0600) into the directory given: a run's
lies in its scratch directory (scratch.py), never in the results or the
repository. The CA's private key is never written: it signs the certificates
in memory and is dropped, so no file or container holds it.
ECDSA P-256 keeps generation fast.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

VALIDITY = dt.timedelta(days=2)


@dataclass(frozen=True)
class Issued:
    cert: Path
    key: Path


@dataclass(frozen=True)
class Pki:
    ca: Path
    roles: dict[str, Issued]


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name),
                      x509.NameAttribute(NameOID.ORGANIZATION_NAME, "vnetbench run")])


def write_private(path: Path, data: str | bytes) -> Path:
    """A file only its owner may read, from before its first byte: a key written
    into it is never readable by others, not even for an instant."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch(mode=0o600)
    path.chmod(0o600)  # touch keeps an existing file's mode
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def _write_key(key: ec.EllipticCurvePrivateKey, path: Path) -> None:
    write_private(path, key.private_bytes(serialization.Encoding.PEM,
                                          serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()))


def _write_cert(cert: x509.Certificate, path: Path) -> None:
    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    path.chmod(0o644)


def make_pki(directory: Path, run_id: str, roles: list[str]) -> Pki:
    """A CA for this run and a client+server certificate per role, as PEM files
    (ca.pem, <role>.pem, <role>.key); the CA's key stays in memory only."""
    directory.mkdir(parents=True, exist_ok=True)
    directory.chmod(0o755)
    now = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=5)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = _name(f"vnetbench CA {run_id}")
    ca_cert = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
               .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now).not_valid_after(now + VALIDITY)
               .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
               .sign(ca_key, hashes.SHA256()))
    _write_cert(ca_cert, directory / "ca.pem")
    issued = {}
    for role in roles:
        key = ec.generate_private_key(ec.SECP256R1())
        cert = (x509.CertificateBuilder().subject_name(_name(role)).issuer_name(ca_name)
                .public_key(key.public_key()).serial_number(x509.random_serial_number())
                .not_valid_before(now).not_valid_after(now + VALIDITY)
                .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                .add_extension(x509.SubjectAlternativeName([x509.DNSName(role)]), critical=False)
                .add_extension(x509.KeyUsage(  # OpenVPN's remote-cert-tls checks it
                    digital_signature=True, key_agreement=True, content_commitment=False,
                    key_encipherment=False, data_encipherment=False, key_cert_sign=False,
                    crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
                .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH,
                                                      ExtendedKeyUsageOID.CLIENT_AUTH]),
                               critical=False)
                .sign(ca_key, hashes.SHA256()))
        issued[role] = Issued(directory / f"{role}.pem", directory / f"{role}.key")
        _write_cert(cert, issued[role].cert)
        _write_key(key, issued[role].key)
    return Pki(directory / "ca.pem", issued)
