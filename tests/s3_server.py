"""A real S3-compatible server on loopback for tests: moto's server mode, in a thread.

The results store reaches it the way it reaches any store, through the standard AWS
variables (``AWS_ENDPOINT_URL`` and dummy keys), which :func:`s3_env` sets.

A test module that wants the fixtures ``endpoint`` (one server per module) and ``url`` (a
new bucket's results URL per test) imports ``s3_endpoint_fixture`` and ``s3_url_fixture``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from threading import Thread

import pytest
from moto.server import DomainDispatcherApplication, ThreadedMotoServer, create_backend_app
from werkzeug.serving import make_server

from durabench.results.store import ObjectStore

__all__ = [
    "new_bucket",
    "s3_endpoint_fixture",
    "s3_env",
    "s3_server",
    "s3_tls_server",
    "s3_url_fixture",
]


@contextmanager
def s3_server() -> Iterator[str]:
    """A moto S3 server on 127.0.0.1 and a free port, for as long as the block; its URL."""
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        yield f"http://{host}:{port}"
    finally:
        server.stop()


@contextmanager
def s3_tls_server(cert: Path, key: Path) -> Iterator[str]:
    """The same server over TLS with ``cert`` (for clients that refuse plain HTTP); its URL."""
    app = DomainDispatcherApplication(create_backend_app)
    server = make_server("127.0.0.1", 0, app, threaded=True, ssl_context=(str(cert), str(key)))
    thread = Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(30)


def s3_env(monkeypatch: pytest.MonkeyPatch, endpoint: str) -> dict[str, str]:
    """Point botocore in this process at ``endpoint``; the variables, for child processes."""
    env = {
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": "test",
        "AWS_SECRET_ACCESS_KEY": "test",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_EC2_METADATA_DISABLED": "true",  # no credential lookups off loopback
        "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent",
        "AWS_CONFIG_FILE": "/nonexistent",
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    return env


def new_bucket() -> str:
    """A fresh bucket name."""
    return f"durabench-{uuid.uuid4().hex[:12]}"


@pytest.fixture(scope="module", name="endpoint")
def s3_endpoint_fixture() -> Iterator[str]:
    """One S3 server for the test module; its URL."""
    with s3_server() as url:
        yield url


@pytest.fixture(name="url")
def s3_url_fixture(endpoint: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """A new bucket on the module's server, and its results URL (``s3://BUCKET/results``)."""
    s3_env(monkeypatch, endpoint)
    bucket = new_bucket()
    url = f"s3://{bucket}/results"
    ObjectStore(url).fs.mkdir(bucket)
    return url
