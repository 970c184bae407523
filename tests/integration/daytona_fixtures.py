"""Fixtures for the Daytona backend's tests: the stand-in, and options that reach it."""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from durabench.sandbox.daytona import DaytonaOptions
    from durabench.settings.values import Settings
    from tests.daytona_standin import DaytonaStandIn

__all__ = [
    "ENDPOINTS_FILE",
    "daytona_clients_closed",
    "daytona_options_for",
    "built_task_image",
    "record_endpoints",
    "standin",
    "standin_serving",
]

ENDPOINTS_FILE = Path(__file__).resolve().parents[2] / "docs" / "daytona-endpoints.txt"
"""The endpoints the SDK called in the paired run, as the stand-in saw them."""


def record_endpoints(standin: DaytonaStandIn, path: Path) -> None:
    """Write the distinct (method, route) pairs of the SDK's traffic, sorted.

    Only with ``DURABENCH_RECORD_DAYTONA_ENDPOINTS=1``: the file is documentation, kept
    in git, refreshed on purpose.
    """
    if os.environ.get("DURABENCH_RECORD_DAYTONA_ENDPOINTS") != "1":
        return
    seen = sorted(set(standin.traffic))
    path.write_text("".join(f"{method} {route}\n" for method, route in seen))


def built_task_image(settings: Settings, tmp_path: Path) -> str:
    """A task image Daytona builds from uploaded files (so push-access is asked), of new
    content (a nonce file), so no earlier build is reused."""
    from activities.backends import remote_image
    from durabench.tasks import load_suite

    bundled = load_suite("pytorch")[0]
    task_dir = tmp_path / bundled.task_id
    shutil.copytree(bundled.task_dir, task_dir)
    (task_dir / "environment" / "tinytensor" / "nonce.txt").write_text(uuid.uuid4().hex)
    task = bundled.model_copy(update={"task_dir": str(task_dir)})
    on_daytona = settings.model_copy(update={"sandbox": "daytona"})
    return remote_image(on_daytona, task, "Dockerfile", None, tmp_path / "log").image


def daytona_options_for(standin: DaytonaStandIn) -> DaytonaOptions:
    """Options that reach the stand-in, retrying fast."""
    from durabench.sandbox.daytona import DaytonaOptions

    return DaytonaOptions(api_url=standin.url, target="local", backoff_s=0.05)


@contextmanager
def standin_serving(tls_dir: Path) -> Iterator[DaytonaStandIn]:
    """The stand-in serving; ``DAYTONA_API_KEY`` must be set to its key to reach it.

    Its build contexts go to a moto S3 server over TLS on loopback, whose test CA this
    thread trusts (:mod:`tests.tls_trust`): the SDK's uploader accepts nothing less.
    """
    import boto3

    from tests.daytona_standin import BUCKET, DaytonaStandIn, ImageBuilds
    from tests.s3_server import s3_tls_server
    from tests.tls_trust import loopback_cert, trust_in_this_thread

    ca, cert, key = loopback_cert(tls_dir)
    trust_in_this_thread(ca)
    with s3_tls_server(cert, key) as s3_url:
        boto3.client(
            "s3",
            endpoint_url=s3_url,
            aws_access_key_id="test",
            aws_secret_access_key="test",
            region_name="us-east-1",
            verify=str(ca),
        ).create_bucket(Bucket=BUCKET)
        server = DaytonaStandIn(images=ImageBuilds(s3_url=s3_url, s3_ca=str(ca)))
        server.start()
        try:
            yield server
        finally:
            server.stop()


@pytest.fixture(scope="session")
def standin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaytonaStandIn]:
    """One stand-in per session, its key in the environment the SDK reads."""
    pytest.importorskip("daytona", reason="the daytona extra is not installed")
    from tests.daytona_standin import API_KEY

    mp = pytest.MonkeyPatch()
    mp.setenv("DAYTONA_API_KEY", API_KEY)
    # It builds FROM the worker's own daemon's images, as a self-hosted Daytona with a
    # mirror would: the registry check is for Daytona's cloud (test_daytona_base_pull).
    mp.setenv("DURABENCH_DAYTONA_BASE_CHECK", "false")
    try:
        with standin_serving(tmp_path_factory.mktemp("daytona-tls")) as server:
            yield server
    finally:
        mp.undo()


@pytest.fixture
async def daytona_clients_closed() -> AsyncIterator[None]:
    """Close the SDK clients this test's loop made, once it ends."""
    yield
    from durabench.sandbox.daytona import close_clients

    await close_clients()
