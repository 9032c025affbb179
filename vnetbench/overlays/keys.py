"""Per-run overlay keys: WireGuard's Curve25519 pairs and tinc 1.0's RSA pairs."""

from __future__ import annotations

import base64

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey


def wireguard_keypair() -> tuple[str, str]:
    """(private, public) in WireGuard's base64 form."""
    private = X25519PrivateKey.generate()
    raw = private.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
                                serialization.NoEncryption())
    public = private.public_key().public_bytes(serialization.Encoding.Raw,
                                               serialization.PublicFormat.Raw)
    return base64.b64encode(raw).decode(), base64.b64encode(public).decode()


def tinc_keypair(bits: int = 2048) -> tuple[str, str]:
    """(private, public) PEM in the PKCS#1 forms tinc 1.0 reads."""
    private = rsa.generate_private_key(public_exponent=65537, key_size=bits)
    private_pem = private.private_bytes(serialization.Encoding.PEM,
                                        serialization.PrivateFormat.TraditionalOpenSSL,
                                        serialization.NoEncryption())
    public_pem = private.public_key().public_bytes(serialization.Encoding.PEM,
                                                   serialization.PublicFormat.PKCS1)
    return private_pem.decode(), public_pem.decode()
