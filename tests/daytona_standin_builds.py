"""How the Daytona stand-in builds images: as Daytona does, from uploaded contexts.

The SDK asks ``/api/object-storage/push-access`` where to put the files a Dockerfile
copies, uploads them to that S3 store (a real S3 server on loopback) under their content
hash, and sends the Dockerfile text and those hashes with the create. The stand-in
fetches the contexts from the store and runs ``docker build`` with no network, once per
Dockerfile text and hashes (:attr:`ImageBuilds.builds` counts real builds).
"""

from __future__ import annotations

import hashlib
import io
import tarfile
import tempfile
import threading
from dataclasses import dataclass, field

import docker
import docker.errors
from daytona_api_client.models.create_build_info import CreateBuildInfo
from daytona_api_client.models.storage_access_dto import StorageAccessDto

__all__ = ["BUCKET", "STANDIN_LABEL", "ImageBuilds"]

STANDIN_LABEL = "durabench.test.daytona-standin"
BUCKET = "daytona-builds"
_ORG = "org"
_IMAGE_REPO = "durabench-standin"


@dataclass
class ImageBuilds:
    """The store build contexts go to, and the images built from them."""

    s3_url: str = ""
    """The S3 store (https: the SDK's uploader refuses plain HTTP)."""
    s3_ca: str | None = None
    """The CA file the stand-in checks the store's certificate with."""
    builds: int = 0
    """Images built: the same Dockerfile and contexts must build once."""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def push_access(self) -> StorageAccessDto:
        """Where the SDK uploads build contexts: the loopback S3 store."""
        return StorageAccessDto(
            access_key="test",
            secret="test",
            session_token="",
            storage_url=self.s3_url,
            organization_id=_ORG,
            bucket=BUCKET,
            region="us-east-1",
        )

    def image(self, client: docker.DockerClient, info: CreateBuildInfo, label: str) -> str:
        """The image for a build: cached by its Dockerfile and context hashes, else built."""
        hashes = list(info.context_hashes or [])
        key = "\0".join([info.dockerfile_content, *hashes])
        tag = f"{_IMAGE_REPO}:{hashlib.sha256(key.encode()).hexdigest()[:16]}"
        with self._lock:
            try:
                client.images.get(tag)
                return tag
            except docker.errors.ImageNotFound:
                pass
            with tempfile.TemporaryDirectory(prefix="daytona-standin-") as ctx:
                for digest in hashes:
                    self._fetch_context(digest, ctx)
                with open(f"{ctx}/.standin.Dockerfile", "w") as f:
                    f.write(info.dockerfile_content)
                client.images.build(
                    path=ctx,
                    dockerfile=".standin.Dockerfile",
                    tag=tag,
                    rm=True,
                    forcerm=True,
                    network_mode="none",
                    labels={STANDIN_LABEL: label},
                )
            self.builds += 1
        return tag

    def _fetch_context(self, digest: str, into: str) -> None:
        """Unpack the context the SDK uploaded under ``digest`` into ``into``."""
        import boto3  # the stand-in's own S3 client; moto ships it

        s3 = boto3.client(
            "s3",
            endpoint_url=self.s3_url,
            aws_access_key_id="test",
            aws_secret_access_key="test",
            region_name="us-east-1",
            verify=self.s3_ca,
        )
        body = s3.get_object(Bucket=BUCKET, Key=f"{_ORG}/{digest}/context.tar")["Body"].read()
        with tarfile.open(fileobj=io.BytesIO(body)) as tar:
            tar.extractall(into, filter="data")
