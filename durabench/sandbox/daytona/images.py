"""Task images on Daytona: built by Daytona from the task's Dockerfile, cached by content.

A Daytona sandbox cannot start ``FROM`` a tag that exists only on the worker's Docker
daemon, and a worker on this backend may have no daemon at all. So ``provision_sandbox``
builds nothing here: it names the build (:func:`build_ref`: the Dockerfile's path, the base
image, and the same content hash that tags local task images), and the sandbox is created
from that Dockerfile with the SDK's :meth:`~daytona.Image.from_dockerfile`. The SDK uploads
the files the Dockerfile copies to Daytona's object storage under their content hash
(skipped when already there), and Daytona keys its built snapshot on the Dockerfile text
and those hashes: the same task, variant and base image build once and every later
attempt starts from the cached snapshot.

An agent CLI durabench installs (claude-code, codex-cli, gemini-cli) is the worker's
npm-installed tools directory, added onto the task's Dockerfile with
:meth:`~daytona.Image.add_local_dir` as the local agent layer copies it: uploaded once
under its content hash and built into Daytona's snapshot with the task, so the pair
builds once. With no daemon to look inside the task image first, the layer is always
added; a pinned version goes first on PATH, else last, so a task image's own CLI still
runs where it has one, as on local images.
"""

from __future__ import annotations

import re
from pathlib import Path

from daytona import Image

from durabench.errors import ConfigError
from durabench.sandbox.docker.agent_images import tools_path

__all__ = ["BUILD_SCHEME", "build_ref", "image_for"]

BUILD_SCHEME = "dockerfile:"
"""How an image reference that is a Dockerfile build begins (a plain name is an image)."""
_ARG = re.compile(r"^[ \t]*ARG[ \t]+BASE_IMAGE([ \t]*=[^\n]*)?$", re.MULTILINE | re.IGNORECASE)


def build_ref(
    env_dir: Path,
    dockerfile: str,
    base_image: str,
    content_tag: str,
    tools: Path | None = None,
    tools_first: bool = False,
) -> str:
    """The reference a Daytona sandbox is built from: ``dockerfile:PATH|BASE|TAG|TOOLS``.

    ``content_tag`` (the local task image's tag, a hash of ``environment/``) is carried so
    a result names the content it ran, and so a changed task is a different reference.
    ``tools`` is the worker's installed agent CLI directory to add, if any, first on PATH
    when ``tools_first`` (a pinned version), else last.
    """
    added = f"{'first' if tools_first else 'last'}:{tools}" if tools else ""
    return f"{BUILD_SCHEME}{env_dir / dockerfile}|{base_image}|{content_tag}|{added}"


def image_for(ref: str) -> Image | str:
    """The SDK image for a reference: a Dockerfile build, or a plain image name.

    Daytona builds take no build arguments, so ``ARG BASE_IMAGE`` is given the worker's
    base image as its default in the text sent. ``strict_context`` refuses a ``COPY``
    from outside the task's ``environment/``: a task's Dockerfile must not ship the
    worker's files to Daytona.

    Raises:
        ConfigError: the Dockerfile is missing, or copies from outside its directory.
    """
    if not ref.startswith(BUILD_SCHEME):
        return ref
    path, base, _, tools = ref.removeprefix(BUILD_SCHEME).rsplit("|", 3)
    try:
        image = Image.from_dockerfile(path, strict_context=True)
    except Exception as exc:  # the SDK's validation errors: not found, outside context
        raise ConfigError(
            f"task Dockerfile {path} cannot be sent to Daytona ({exc}); it must exist and "
            "copy only files under its own directory"
        ) from exc
    text = image.dockerfile()
    fixed = _ARG.sub(f"ARG BASE_IMAGE={base}", text)
    if fixed == text:
        fixed = f"ARG BASE_IMAGE={base}\n{text}"
    if not fixed.endswith("\n"):
        fixed += "\n"  # what is appended below starts a line
    # The SDK has no public setter for the text; its context list stays as it parsed it.
    image._dockerfile = fixed
    if tools:
        where, _, tools_dir = tools.partition(":")
        modules = tools_path(Path(tools_dir))
        image.add_local_dir(Path(tools_dir) / "node_modules", modules)
        path = f"{modules}/.bin:$PATH" if where == "first" else f"$PATH:{modules}/.bin"
        # Not Image.env: it quotes the value, and Docker expands no $PATH in quotes.
        image._dockerfile += f"ENV PATH={path}\n"
    return image
