"""Task images: built from the task's ``environment/`` and cached by content.

The tag is a hash of every file under ``environment/``, the Dockerfile variant and the
base image, so an unchanged task never builds twice and a changed one always does.
"""

from __future__ import annotations

import hashlib
import re
import threading
from pathlib import Path
from typing import IO, Any

import docker
import docker.errors
import requests

from durabench.errors import ImageBuildError
from durabench.models.task import TaskSpec
from durabench.sandbox.docker.errors import map_docker_errors

__all__ = ["BUILD_LIMITS", "build_context", "ensure_image", "image_id", "image_tag", "lock_for"]

_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


def image_tag(task: TaskSpec, dockerfile: str, base_image: str) -> str:
    """Content-addressed tag of the image for ``task`` built from ``dockerfile``."""
    env_dir = Path(task.task_dir) / "environment"
    digest = hashlib.sha256(f"{dockerfile}\0{base_image}\0".encode())
    for path in sorted(p for p in env_dir.rglob("*") if p.is_file()):
        digest.update(path.relative_to(env_dir).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    name = re.sub(r"[^a-z0-9_.-]+", "-", task.task_id.lower()).strip("-.") or "task"
    return f"durabench-task/{name}:{digest.hexdigest()[:16]}"


def image_id(client: docker.DockerClient, image: str) -> str:
    """The id (``sha256:...``) of ``image``: what a tag named when the attempt ran. Blocking.

    A tag can be moved; the id names the image's content, so a result can be reproduced.

    Raises:
        DockerUnavailable: no daemon answers, or the image is gone.
    """
    with map_docker_errors(f"looking up image {image}"):
        return str(client.images.get(image).id)


def lock_for(key: str) -> threading.Lock:
    """One lock per key (an image tag, an install), shared by every thread of the worker."""
    with _locks_guard:
        return _locks.setdefault(key, threading.Lock())


def ensure_image(
    client: docker.DockerClient,
    task: TaskSpec,
    dockerfile: str,
    base_image: str,
    log_path: Path,
) -> str:
    """Build the task image unless it exists; return its tag. Blocking: call in a thread.

    Raises:
        ImageBuildError: the build failed; the log is at ``log_path``.
        DockerUnavailable: no daemon answers.
    """
    tag = image_tag(task, dockerfile, base_image)
    with lock_for(tag):
        with map_docker_errors(f"looking up image {tag}"):
            try:
                client.images.get(tag)
                log_path.parent.mkdir(parents=True, exist_ok=True)
                log_path.write_text(f"image {tag} already built; cached\n")
                return tag
            except docker.errors.ImageNotFound:
                pass
        _build(client, task, dockerfile, base_image, tag, log_path)
    return tag


def _build(
    client: docker.DockerClient,
    task: TaskSpec,
    dockerfile: str,
    base_image: str,
    tag: str,
    log_path: Path,
) -> None:
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("w") as log:
        log.write(f"building {tag} from {dockerfile} (BASE_IMAGE={base_image})\n")
        error = build_context(
            client,
            Path(task.task_dir) / "environment",
            dockerfile,
            tag,
            log,
            task.build_timeout_sec,
            buildargs={"BASE_IMAGE": base_image},
        )
    if error is not None:
        raise ImageBuildError(
            f"image for task {task.task_id} ({dockerfile}) failed to build: {error.strip()}; "
            f"build log: {log_path}"
        )


BUILD_LIMITS = {"memory": 4096 << 20, "memswap": 4096 << 20, "cpushares": 1024}
"""What each build step's container may use: 4 GiB and no more (swap included), and the
default CPU share (builds compete with sandboxes on equal terms)."""


def build_context(
    client: docker.DockerClient,
    context: Path,
    dockerfile: str,
    tag: str,
    log: IO[str],
    timeout_s: float,
    buildargs: dict[str, str] | None = None,
) -> str | None:
    """Build ``context`` with ``dockerfile`` (a name in it, or a path outside it) as ``tag``.

    The daemon's output goes to ``log``. Blocking. A task's Dockerfile is someone else's
    code run on the worker's daemon, so its steps run within :data:`BUILD_LIMITS` (memory,
    no swap beyond it, a CPU share like a sandbox's).

    Returns:
        The build's error, or ``None`` when it built.

    Raises:
        DockerUnavailable: no daemon answers.
    """
    error: str | None = None
    with map_docker_errors(f"building image {tag}"):
        try:
            chunks = client.api.build(
                path=str(context),
                dockerfile=dockerfile,
                tag=tag,
                buildargs=buildargs or {},
                rm=True,
                forcerm=True,
                decode=True,
                timeout=int(timeout_s),
                container_limits={
                    "memory": BUILD_LIMITS["memory"],
                    "memswap": BUILD_LIMITS["memswap"],
                    "cpushares": BUILD_LIMITS["cpushares"],
                },
            )
            for chunk in chunks:
                error = _log_chunk(log, chunk) or error
        except docker.errors.APIError as exc:
            error = str(exc)
            log.write(f"{error}\n")
        except requests.exceptions.ReadTimeout:
            error = f"the build ran past its time limit ({timeout_s:g} s)"
            log.write(f"{error}\n")
    return error


def _log_chunk(log: Any, chunk: dict[str, Any]) -> str | None:
    if "stream" in chunk:
        log.write(str(chunk["stream"]))
    if "error" in chunk:
        log.write(f"ERROR: {chunk['error']}\n")
        return str(chunk["error"])
    return None
