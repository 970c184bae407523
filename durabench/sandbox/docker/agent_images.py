"""Agent CLIs in task images: used where the image has them, else added in a cached layer.

A task image that already has the CLI on PATH is used as it is, unless a version was
pinned (``--agent-opt version=V``): a pin always gets its own layer. Otherwise the worker
installs the pinned npm packages once into ``<home>/agent-tools/`` (with a Node.js runtime
from npm when the CLI needs one) and builds ``FROM`` the task image with that directory
copied in. The derived image is tagged by the task image's id and the install, so each
pair of them builds once per host and a rebuilt task image gets a fresh layer.

npm installs for the worker's own platform, so the task image must match it: the same
CPU architecture and glibc (an Alpine/musl image is refused with the fix). npm runs with
a bare environment: the worker's keys never reach it or the packages' install scripts.
"""

from __future__ import annotations

import hashlib
import os
import platform
import re
import shutil
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

import docker
import docker.errors

from durabench.agents.base import CliInstall
from durabench.errors import ImageBuildError
from durabench.sandbox.docker.errors import map_docker_errors
from durabench.sandbox.docker.images import build_context, lock_for
from durabench.sandbox.docker.npm_run import LOGLEVEL, run_npm

__all__ = [
    "TOOLS_DIR",
    "agent_image_tag",
    "ensure_agent_image",
    "ensure_tools",
    "install_tools",
    "tools_path",
]

TOOLS_DIR = "/opt/durabench/tools"
"""Where installed CLIs live inside a derived image."""
_NPM_TIMEOUT_S = 900
_BUILD_TIMEOUT_S = 900
_STALE_INSTALL_S = 3600
_NPM_ENV = (
    "PATH",
    "HOME",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "NODE_EXTRA_CA_CERTS",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
)
"""The only variables npm sees (plus ``npm_config_*``): never an API key. The host's CA
settings are among them: behind a TLS-inspecting proxy npm trusts what the host trusts
(``--prefix`` makes npm skip the global npmrc, and its ``cafile`` with it)."""
_ARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}

_probes: dict[tuple[str, str], _Probe] = {}


class _Probe(NamedTuple):
    has_binary: bool
    musl: bool


def _slug(install: CliInstall) -> str:
    digest = hashlib.sha256(install.key.encode()).hexdigest()[:12]
    name = re.sub(r"[^a-z0-9]+", "-", install.binary.lower()).strip("-")
    return f"{name}-{digest}"


def agent_image_tag(image_id: str, install: CliInstall) -> str:
    """The derived image's tag: the task image's id and the install, hashed."""
    digest = hashlib.sha256(f"{image_id}\0{install.key}".encode()).hexdigest()[:16]
    return f"durabench-agent/{_slug(install)}:{digest}"


def _npm_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in _NPM_ENV or k.startswith("npm_config_")}
    return env | {"npm_config_update_notifier": "false"}


def _clear_stale(cache: Path) -> None:
    """Remove installs a killed worker left half done."""
    cutoff = time.time() - _STALE_INSTALL_S
    for old in cache.glob(".installing-*"):
        if old.stat().st_mtime < cutoff:
            shutil.rmtree(old, ignore_errors=True)


def install_tools(install: CliInstall, cache: Path, log_path: Path) -> Path:
    """npm-install ``install`` into ``cache`` once; return its directory. Blocking.

    The install goes to a temporary directory renamed into place when complete, so a
    crash mid-install leaves nothing that looks finished; of two workers installing at
    once, the second to finish keeps the first one's directory.

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
    _clear_stale(cache)
    packages = [*install.packages, *([install.node] if install.node else [])]
    with tempfile.TemporaryDirectory(dir=cache, prefix=".installing-") as tmp:
        args = [npm, "install", "--prefix", tmp, "--no-audit", "--no-fund", *packages]
        with log_path.open("a") as log:
            log.write(f"npm install {' '.join(packages)} {LOGLEVEL}\n")
            log.flush()
            failed = run_npm(args, _npm_env(), log, _NPM_TIMEOUT_S)
        if failed is not None:
            raise ImageBuildError(
                f"npm install of {' '.join(packages)} failed: {failed}\nlog: {log_path}"
            )
        if not (Path(tmp) / "node_modules" / ".bin" / install.binary).exists():
            raise ImageBuildError(
                f"npm installed {' '.join(install.packages)} but no `{install.binary}` "
                f"executable; pick another version (--agent-opt version=...). log: {log_path}"
            )
        try:
            Path(tmp).rename(target)
        except OSError:
            if not (target / "node_modules").is_dir():
                raise
    return target


def _probe(client: docker.DockerClient, image_id: str, binary: str) -> _Probe:
    key = (image_id, binary)
    if key not in _probes:
        script = (
            f"command -v {binary} >/dev/null && echo has; "
            "ls /lib/ld-musl-* >/dev/null 2>&1 && echo musl; true"
        )
        with map_docker_errors(f"looking for {binary} in image {image_id[:19]}"):
            out = client.containers.run(
                image_id,
                entrypoint=["sh", "-c", script],
                command=[],
                network_mode="none",
                cap_drop=["ALL"],
                security_opt=["no-new-privileges:true"],
                pids_limit=64,
                labels={"durabench.probe": binary},
                remove=True,
            )
        words = out.decode(errors="replace").split()
        _probes[key] = _Probe(has_binary="has" in words, musl="musl" in words)
    return _probes[key]


def _check_platform(client: docker.DockerClient, image: str, probe: _Probe) -> None:
    with map_docker_errors(f"inspecting image {image}"):
        arch = str(client.images.get(image).attrs.get("Architecture", ""))
    host = _ARCH.get(platform.machine().lower(), platform.machine().lower())
    if probe.musl or (arch and _ARCH.get(arch, arch) != host):
        what = "musl (Alpine)" if probe.musl else f"{arch}"
        raise ImageBuildError(
            f"task image {image} is {what} but this worker installs agent CLIs for "
            f"{host} with glibc; build the CLI into the task image instead"
        )


def _note(log_path: Path, line: str) -> None:
    with log_path.open("a") as log:
        log.write(line + "\n")


def tools_path(tools: Path) -> str:
    """Where an installed tools directory's ``node_modules`` goes in an image.

    Its ``.bin`` goes first on PATH.
    """
    return f"{TOOLS_DIR}/{tools.name}/node_modules"


def ensure_tools(install: CliInstall, cache: Path, log_path: Path) -> Path:
    """:func:`install_tools`, one install of a kind at a time on this host; blocking."""
    with lock_for(_slug(install)):
        return install_tools(install, cache, log_path)


def _dockerfile(image_id: str, tools: Path) -> str:
    modules = tools_path(tools)
    return f"FROM {image_id}\nCOPY node_modules {modules}\nENV PATH={modules}/.bin:$PATH\n"


def ensure_agent_image(
    client: docker.DockerClient, image: str, install: CliInstall, cache: Path, log_path: Path
) -> str:
    """``image`` if it has the CLI (and no version is pinned), else its derived image; blocking.

    Raises:
        ImageBuildError: the image's platform does not fit, the CLI could not be installed
            or the layer did not build.
        DockerUnavailable: no daemon answers.
    """
    with map_docker_errors(f"looking up image {image}"):
        image_id = str(client.images.get(image).id)
    probe = _probe(client, image_id, install.binary)
    if probe.has_binary and not install.pinned:
        _note(log_path, f"{image} has `{install.binary}` on PATH; nothing to install")
        return image
    tag = agent_image_tag(image_id, install)
    with lock_for(tag):
        with map_docker_errors(f"looking up image {tag}"):
            try:
                client.images.get(tag)
                _note(log_path, f"{tag} ({' '.join(install.packages)} on {image}) cached")
                return tag
            except docker.errors.ImageNotFound:
                pass
        _check_platform(client, image, probe)
        tools = ensure_tools(install, cache, log_path)
        with tempfile.TemporaryDirectory() as tmp, log_path.open("a") as log:
            dockerfile = Path(tmp) / "Dockerfile"
            dockerfile.write_text(_dockerfile(image_id, tools))
            log.write(f"building {tag}: {' '.join(install.packages)} on {image}\n")
            log.flush()
            error = build_context(client, tools, str(dockerfile), tag, log, _BUILD_TIMEOUT_S)
        if error is not None:
            raise ImageBuildError(
                f"adding {install.binary} to {image} failed: {error}; build log: {log_path}"
            )
    return tag
