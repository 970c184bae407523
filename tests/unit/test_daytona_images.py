"""What a Daytona sandbox is built from: the task's Dockerfile, made self-contained."""

from __future__ import annotations

from pathlib import Path

import pytest

from activities.backends import remote_image
from durabench.agents.base import CliInstall
from durabench.errors import ConfigError
from durabench.settings.values import Settings
from durabench.tasks import load_suite

images = pytest.importorskip("durabench.sandbox.daytona.images")


def _env(tmp_path: Path, dockerfile: str) -> Path:
    env = tmp_path / "environment"
    (env / "src").mkdir(parents=True)
    (env / "src" / "a.py").write_text("x = 1\n")
    (env / "Dockerfile").write_text(dockerfile)
    return env


def test_the_base_image_argument_gets_the_workers_base(tmp_path: Path) -> None:
    """Daytona builds take no build arguments: the default carries the base image."""
    env = _env(tmp_path, "ARG BASE_IMAGE=python:3.12-slim\nFROM ${BASE_IMAGE}\nCOPY src/ /w/\n")
    image = images.image_for(images.build_ref(env, "Dockerfile", "reg.example/base:1", "t:1"))
    text = image.dockerfile()
    assert text.startswith("ARG BASE_IMAGE=reg.example/base:1\nFROM ${BASE_IMAGE}")
    assert "python:3.12-slim" not in text


def test_a_copy_from_outside_the_environment_is_refused(tmp_path: Path) -> None:
    """A task's Dockerfile must not send the worker's own files to Daytona."""
    (tmp_path / "secret.txt").write_text("no")
    env = _env(tmp_path, "FROM base\nCOPY ../secret.txt /s\n")
    with pytest.raises(ConfigError, match="only files under its own directory"):
        images.image_for(images.build_ref(env, "Dockerfile", "base", "t:1"))


def test_a_plain_image_name_stays_a_name() -> None:
    assert images.image_for("python:3.12-slim") == "python:3.12-slim"


def installed(home: Path, install: CliInstall) -> Path:
    """The worker's npm install of ``install``, as a finished one looks (no npm here)."""
    from durabench.sandbox.docker.agent_images import _slug

    tools = home / "agent-tools" / _slug(install)
    (tools / "node_modules" / ".bin").mkdir(parents=True)
    return tools


@pytest.mark.parametrize(
    ("pinned", "path"), [(False, "$PATH:{bin}"), (True, "{bin}:$PATH")], ids=["own", "pinned"]
)
def test_an_agent_cli_is_added_onto_the_task_dockerfile(
    tmp_path: Path, pinned: bool, path: str
) -> None:
    """The worker's installed tools go in as a local-dir layer: first on PATH when the
    version is pinned, else last, so a task image's own CLI runs where it has one."""
    task = load_suite("pytorch")[0]
    packages = ("@anthropic-ai/claude-code@1",)
    install = CliInstall(binary="claude", packages=packages, pinned=pinned)
    settings = Settings(home=tmp_path, sandbox="daytona")
    tools = installed(settings.home, install)
    prepared = remote_image(settings, task, "Dockerfile", install, tmp_path / "build.log")
    assert prepared.agent_image_id != prepared.task_image_id
    text = images.image_for(prepared.image).dockerfile()
    modules = f"/opt/durabench/tools/{tools.name}/node_modules"
    assert f'"{modules}"]\n' in text and "COPY tinytensor/" in text, text
    assert text.endswith(f"ENV PATH={path.format(bin=modules + '/.bin')}\n"), text


def test_the_reference_names_the_content_without_docker(tmp_path: Path) -> None:
    task = load_suite("pytorch")[0]
    prepared = remote_image(
        Settings(home=tmp_path, sandbox="daytona"), task, "Dockerfile", None, tmp_path / "log"
    )
    assert prepared.image.startswith(images.BUILD_SCHEME)
    assert prepared.task_image_id.startswith("durabench-task/")
    assert prepared.task_image_id in prepared.image
