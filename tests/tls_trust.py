"""A test CA, a loopback server certificate, and trust in it for code that reads only the
system's CA bundle.

The Daytona SDK uploads build contexts with ``obstore``, which refuses plain HTTP and
trusts only the system's roots, read from ``/etc/ssl/certs/ca-certificates.crt`` while
its environment is cleared (so ``SSL_CERT_FILE`` cannot point it elsewhere). A loopback
S3 server therefore needs TLS under a CA that file holds. :func:`trust_in_this_thread`
adds the test CA to it for the calling thread only, and the threads and processes it
starts: a mount namespace of its own, and the system bundle plus the test CA bind-mounted
over it. The machine's own file is never written. The namespace is the host's slave, not
private: its bind mount stays in it, while mounts made on the host later (the Docker
daemon's volumes, which the worker reads on the host) still reach every thread the calling
one starts afterwards.
"""

from __future__ import annotations

import ctypes
import datetime as dt
import ipaddress
import os
import time
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = ["SYSTEM_BUNDLE", "loopback_cert", "trust_in_this_thread"]

SYSTEM_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
_CLONE_NEWNS = 0x20000
_MS_BIND, _MS_REC, _MS_SLAVE = 4096, 16384, 1 << 19


def _pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def loopback_cert(directory: Path) -> tuple[Path, Path, Path]:
    """A fresh CA and a certificate for 127.0.0.1 it signed: (ca, cert, key) PEM files."""
    now = dt.datetime.fromtimestamp(time.time(), tz=dt.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "durabench test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    paths = directory / "ca.pem", directory / "cert.pem", directory / "key.pem"
    paths[0].write_bytes(_pem(ca))
    paths[1].write_bytes(_pem(cert))
    paths[2].write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return paths


def trust_in_this_thread(ca: Path) -> None:
    """Make the system bundle, as this thread sees it, also trust ``ca``.

    Skips the test where the bundle is elsewhere or mount namespaces are not allowed
    (no CAP_SYS_ADMIN): nothing else lets the SDK's uploader trust a loopback server.
    """
    if not SYSTEM_BUNDLE.is_file():
        pytest.skip(f"no system CA bundle at {SYSTEM_BUNDLE} to add the test CA to")
    bundle = ca.parent / "bundle.pem"
    bundle.write_bytes(SYSTEM_BUNDLE.read_bytes() + b"\n" + ca.read_bytes())
    libc = ctypes.CDLL(None, use_errno=True)
    calls = (
        lambda: libc.unshare(_CLONE_NEWNS),
        lambda: libc.mount(None, b"/", None, _MS_REC | _MS_SLAVE, None),
        lambda: libc.mount(os.fsencode(bundle), os.fsencode(SYSTEM_BUNDLE), None, _MS_BIND, None),
    )
    for step in calls:
        if step() != 0:
            err = ctypes.get_errno()
            pytest.skip(f"cannot trust the test CA here ({os.strerror(err)}): needs CAP_SYS_ADMIN")
