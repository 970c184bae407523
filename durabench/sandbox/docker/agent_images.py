"""Agent CLIs in task images: used where the image has them, else added in a cached layer.

A task image that already has the CLI on PATH is used as it is. Otherwise the worker
installs the pinned npm packages once into ``<home>/agent-tools/`` (with a Node.js runtime
from npm when the CLI needs one) and builds ``FROM`` the task image with that directory
copied in. The derived image is tagged by the task image's id and the install, so each
pair of them builds once per host and a rebuilt task image gets a fresh layer.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

import docker
import docker.errors

from durabench.agents.base import CliInstall
from durabench.errors import ImageBuildError
from durabench.sandbox.docker.errors import map_docker_errors
from durabench.sandbox.docker.images import build_context

__all__ = ["TOOLS_DIR", "agent_image_tag", "ensure_agent_image", "install_tools"]

TOOLS_DIR = "/opt/durabench/tools"
"""Where installed CLIs live inside a derived image."""
_NPM_TIMEOUT_S = 900
_BUILD_TIMEOUT_S = 900
_lock = threading.Lock()
_has_binary: dict[tuple[str, str], bool] = {}


def _slug(install: CliInstall) -> str:
    digest = hashlib.sha256(install.key.encode()).hexdigest()[:12]
    name = re.sub(r"[^a-z0-9]+", "-", install.binary.lower()).strip("-")
    return f"{name}-{digest}"


def agent_image_tag(image_id: str, install: CliInstall) -> str:
    """The derived image's tag: the task image's id and the install, hashed."""
    digest = hashlib.sha256(f"{image_id}\0{install.key}".encode()).hexdigest()[:16]
    return f"durabench-agent/{_slug(install)}:{digest}"


def install_tools(install: CliInstall, cache: Path, log_path: Path) -> Path:
    """npm-install ``install`` into ``cache`` once; return its directory. Blocking.

    The install goes to a temporary directory renamed into place when complete, so a
    crash mid-install leaves nothing that looks finished.

    Raises:
        ImageBuildError: npm is missing or the install failed; the log says why.
    """
    target = cache / _slug(install)
    if (target / "node_modules").is_dir():
        return target
    npm = shutil.which("npm")
    if npm is None:
        raise ImageBuildError(
            f"the task image has no `{install.binary}` and this worker has no npm to install "
            f"{' '.join(install.packages)}; install Node.js and npm on the worker host "
            "(`apt-get install npm`) or use a task image with the CLI on PATH"
        )
    cache.mkdir(parents=True, exist_ok=True)
    packages = [*install.packages, *([install.node] if install.node else [])]
    with tempfile.TemporaryDirectory(dir=cache, prefix=".installing-") as tmp:
        args = [npm, "install", "--prefix", tmp, "--no-audit", "--no-fund"]
        with log_path.open("a") as log:
            log.write(f"npm install {' '.join(packages)}\n")
            log.flush()
            try:
                done = subprocess.run(
                    [*args, *packages],
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    timeout=_NPM_TIMEOUT_S,
                    check=False,
                )
            except subprocess.TimeoutExpired:
                done = None
        if done is None or done.returncode != 0:
            raise ImageBuildError(
                f"npm install of {' '.join(packages)} failed; is the npm registry reachable "
                f"from this worker? log: {log_path}"
            )
        if not (Path(tmp) / "node_modules" / ".bin" / install.binary).exists():
            raise ImageBuildError(
                f"npm installed {' '.join(install.packages)} but no `{install.binary}` "
                f"executable; pick another version (--agent-opt version=...). log: {log_path}"
            )
        Path(tmp).rename(target)
    return target


def _image_has(client: docker.DockerClient, image_id: str, binary: str) -> bool:
    key = (image_id, binary)
    if key not in _has_binary:
        with map_docker_errors(f"looking for {binary} in image {image_id[:19]}"):
            try:
                client.containers.run(
                    image_id,
                    entrypoint=["sh", "-c", f"command -v {binary}"],
                    command=[],
                    network_mode="none",
                    remove=True,
                )
                _has_binary[key] = True
            except docker.errors.ContainerError:
                _has_binary[key] = False
    return _has_binary[key]


def _note(log_path: Path, line: str) -> None:
    with log_path.open("a") as log:
        log.write(line + "\n")


def _dockerfile(image_id: str, slug: str) -> str:
    home = f"{TOOLS_DIR}/{slug}"
    return (
        f"FROM {image_id}\n"
        f"COPY node_modules {home}/node_modules\n"
        f"ENV PATH={home}/node_modules/.bin:$PATH\n"
    )


def ensure_agent_image(
    client: docker.DockerClient, image: str, install: CliInstall, cache: Path, log_path: Path
) -> str:
    """``image`` if it has the CLI, else its derived image with the CLI; blocking.

    Raises:
        ImageBuildError: the CLI could not be installed or the layer did not build.
        DockerUnavailable: no daemon answers.
    """
    with map_docker_errors(f"looking up image {image}"):
        image_id = str(client.images.get(image).id)
    if _image_has(client, image_id, install.binary):
        _note(log_path, f"{image} has `{install.binary}` on PATH; nothing to install")
        return image
    tag = agent_image_tag(image_id, install)
    with _lock:
        with map_docker_errors(f"looking up image {tag}"):
            try:
                client.images.get(tag)
                _note(log_path, f"{tag} ({' '.join(install.packages)} on {image}) cached")
                return tag
            except docker.errors.ImageNotFound:
                pass
        tools = install_tools(install, cache, log_path)
        with tempfile.TemporaryDirectory() as tmp, log_path.open("a") as log:
            dockerfile = Path(tmp) / "Dockerfile"
            dockerfile.write_text(_dockerfile(image_id, tools.name))
            log.write(f"building {tag}: {' '.join(install.packages)} on {image}\n")
            error = build_context(client, tools, str(dockerfile), tag, log, _BUILD_TIMEOUT_S)
        if error is not None:
            raise ImageBuildError(
                f"adding {install.binary} to {image} failed: {error}; build log: {log_path}"
            )
    return tag
