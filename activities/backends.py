"""Which sandbox backend a worker's attempts run on, built with what it needs.

Docker needs nothing more than the spec. Daytona needs its options (from the worker's
environment) and, for an agent that calls a model, a network that allows only the
gateway's public address; its agents reach the gateway there, not on the internal
network.
"""

from __future__ import annotations

import platform
from pathlib import Path

from durabench.agents.base import CliInstall
from durabench.errors import ConfigError
from durabench.models.attempt import PreparedImage
from durabench.models.task import TaskSpec
from durabench.sandbox import Sandbox, SandboxSpec, get_backend
from durabench.sandbox.docker.agent_images import agent_image_tag, ensure_tools
from durabench.sandbox.docker.images import image_tag
from durabench.settings.values import Settings
from durabench.wording import counted

__all__ = [
    "gateway_url_for_sandboxes",
    "make_sandbox",
    "remote",
    "remote_image",
    "sandbox_limits",
]


def remote(settings: Settings) -> bool:
    """Whether sandboxes run off this host (and so off its networks)."""
    return settings.sandbox != "docker"


def make_sandbox(settings: Settings, spec: SandboxSpec) -> Sandbox:
    """A sandbox of the worker's backend for ``spec``.

    Raises:
        ConfigError: Daytona without a usable ``DURABENCH_GATEWAY_PUBLIC_URL`` for an
            agent that needs the network, or without its SDK.
    """
    backend = get_backend(settings.sandbox)  # refused here, with the fix, without its SDK
    if not remote(settings):
        return backend(spec)
    from durabench.sandbox.daytona import DaytonaOptions, allow_list_for, checked_public_url

    options = DaytonaOptions.from_env()
    if spec.network != "none":
        url = checked_public_url(settings.gateway_public_url)
        options = options.model_copy(update={"network_allow_list": allow_list_for(url)})
    return backend(spec, options)  # type: ignore[call-arg]


def gateway_url_for_sandboxes(settings: Settings, internal: str) -> str:
    """The gateway's URL as the worker's sandboxes reach it.

    Raises:
        ConfigError: remote sandboxes, and no usable public URL.
    """
    if not remote(settings):
        return internal
    from durabench.sandbox.daytona import checked_public_url

    return checked_public_url(settings.gateway_public_url)


def sandbox_limits(settings: Settings) -> str:
    """Each sandbox's limits as the plan shows them, for the backend that runs it."""
    disk = f"{settings.sandbox_disk_gb} GB disk" if settings.sandbox_disk_gb else "disk uncapped"
    shown = f"{settings.sandbox_cpus:g} CPUs, {settings.sandbox_memory_mb} MiB, {disk}"
    if not remote(settings):
        return f"{shown}, {counted(settings.sandbox_pids, 'process')}"
    from durabench.sandbox.daytona import DaytonaOptions

    opts = DaytonaOptions.from_env()
    return (
        f"{shown} (rounded up to whole CPUs and GiB; 10 GB disk when uncapped), "
        f"auto-stop after {opts.auto_stop_min} min idle, auto-delete {opts.auto_delete_min} "
        "min after stopping"
    )


def remote_image(
    settings: Settings,
    task: TaskSpec,
    dockerfile: str,
    install: CliInstall | None,
    build_log: Path,
) -> PreparedImage:
    """The image of a remote sandbox: its Dockerfile build, named without a Docker daemon.

    The service builds it (and caches it by content) when the sandbox is created; the
    content hash that tags local task images names it here, so a result still names
    the content it ran. An agent CLI durabench installs is npm-installed on this host
    (once, as for local images) and added as a layer by the service: first on PATH when
    its version is pinned, else after the image's own PATH, so an image's own CLI runs
    where it has one, as on local images. Blocking (npm).

    Raises:
        ConfigError: this host cannot install CLIs for Daytona's machines (linux/amd64).
        ImageBuildError: the npm install failed.
    """
    from durabench.sandbox.daytona.images import build_ref

    tag = image_tag(task, dockerfile, settings.base_image)
    env_dir = Path(task.task_dir) / "environment"
    if install is None:
        ref = build_ref(env_dir, dockerfile, settings.base_image, tag)
        return PreparedImage(
            image=ref, dockerfile=dockerfile, task_image_id=tag, agent_image_id=tag
        )
    host = (platform.system(), platform.machine().lower())
    if host[0] != "Linux" or host[1] not in ("x86_64", "amd64"):
        raise ConfigError(
            f"agent CLI {install.binary} is installed by npm on the worker for Daytona's "
            f"linux/amd64 sandboxes, and this worker is {host[0]}/{host[1]}; run the worker "
            "on linux/amd64, or use a task Dockerfile that installs the CLI itself"
        )
    tools = ensure_tools(install, settings.agent_tools_dir, build_log)
    ref = build_ref(env_dir, dockerfile, settings.base_image, tag, tools, install.pinned)
    agent = agent_image_tag(tag, install)
    return PreparedImage(image=ref, dockerfile=dockerfile, task_image_id=tag, agent_image_id=agent)
