"""The lock files against pyproject.toml and this machine, and what a base install pulls.

requirements.lock is the worker image's install (the base and the s3 extra) and
requirements-dev.lock CI's (the base and the dev extra); scripts/lock.sh makes both.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from importlib.metadata import PackageNotFoundError, requires, version
from pathlib import Path

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from durabench.lock_file import lock_digest, lock_file
from durabench.settings.environment import LOCK_FILE_ENV

REPO = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
BASE_LOCK = REPO / "requirements.lock"
DEV_LOCK = REPO / "requirements-dev.lock"
DEV_EXTRAS = ("dev", "docs", "daytona", "s3")
"""The extras the dev lock holds: dev and the extras it names (durabench[...])."""

S3_ONLY = {"botocore", "aiobotocore", "s3fs", "fsspec", "aiohttp"}
"""What the s3 extra brings, which a base install must not."""


_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)\s*(?:;\s*([^\\]+?))?\s*\\?$")
"""A lock's pin line: ``name==version [; marker] \\``."""


def _pins(lock: Path) -> dict[str, tuple[str, Marker | None]]:
    """Each locked package's version, and the marker it is installed under."""
    pins = {}
    for line in lock.read_text().splitlines():
        found = _PIN.match(line)
        if found:
            name, pinned, marker = found.groups()
            pins[canonicalize_name(name)] = (pinned, Marker(marker) if marker else None)
    return pins


def _declared(*extras: str) -> list[Requirement]:
    """pyproject's base dependencies and those of ``extras``, self-references left out."""
    texts = list(PROJECT["dependencies"])
    for extra in extras:
        texts += PROJECT["optional-dependencies"][extra]
    reqs = [Requirement(t) for t in texts]
    return [r for r in reqs if canonicalize_name(r.name) != "durabench"]


@pytest.mark.parametrize(
    ("lock", "extras"), [(BASE_LOCK, ("s3",)), (DEV_LOCK, DEV_EXTRAS)], ids=["image", "dev"]
)
def test_the_lock_pins_every_declared_dependency_within_its_range(
    lock: Path, extras: tuple[str, ...]
) -> None:
    pins = _pins(lock)
    assert pins, f"{lock.name} has no pins"
    for req in _declared(*extras):
        name = canonicalize_name(req.name)
        assert name in pins, f"{req} is declared but {lock.name} lacks it: run scripts/lock.sh"
        assert req.specifier.contains(pins[name][0], prereleases=True), (req, pins[name][0])


def test_the_dev_lock_pins_the_base_as_the_worker_image_does() -> None:
    base, dev = _pins(BASE_LOCK), _pins(DEV_LOCK)
    assert {n: v for n, (v, _) in base.items()} == {n: dev[n][0] for n in base}


def test_every_pin_that_applies_here_is_the_version_installed() -> None:
    wrong = {}
    for name, (pinned, marker) in _pins(DEV_LOCK).items():
        if marker is not None and not marker.evaluate():
            continue
        try:
            installed = version(name)
        except PackageNotFoundError:
            installed = "not installed"
        if installed != pinned:
            wrong[name] = (pinned, installed)
    assert not wrong, f"lock vs. installed: {wrong}; install from requirements-dev.lock"


def _closure(requirements: list[Requirement]) -> set[str]:
    """Every distribution ``requirements`` pull here, as the installed metadata declares.

    A requirement's own extras (``moto[server]``) are followed; no other extra is.
    """
    pulled: set[str] = set()
    todo = [r for r in requirements if r.marker is None or r.marker.evaluate({"extra": ""})]
    while todo:
        req = todo.pop()
        name = canonicalize_name(req.name)
        if name in pulled:
            continue
        pulled.add(name)
        for text in requires(name) or []:
            sub = Requirement(text)
            extras = (*req.extras, "")
            if sub.marker is None or any(sub.marker.evaluate({"extra": e}) for e in extras):
                todo.append(sub)
    return pulled


def test_a_base_install_pulls_no_botocore() -> None:
    pulled = _closure(_declared())
    assert {"temporalio", "uvicorn", "h11", "requests"} <= pulled  # the walk goes deep
    assert not S3_ONLY & pulled, sorted(S3_ONLY & pulled)
    assert S3_ONLY <= _closure(_declared("s3"))  # the extra brings them


def test_the_checkout_lock_is_found_and_its_digest_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(LOCK_FILE_ENV, raising=False)
    assert lock_file() == BASE_LOCK
    assert lock_digest() == f"sha256:{hashlib.sha256(BASE_LOCK.read_bytes()).hexdigest()}"
    image_lock = tmp_path / "requirements.lock"
    image_lock.write_bytes(b"a==1\n")
    monkeypatch.setenv(LOCK_FILE_ENV, str(image_lock))
    assert lock_digest() == "sha256:" + hashlib.sha256(b"a==1\n").hexdigest()
    monkeypatch.setenv(LOCK_FILE_ENV, str(tmp_path / "missing.lock"))
    assert (lock_file(), lock_digest()) == (None, "")


@pytest.mark.parametrize("missing", ["botocore", "s3fs", "fsspec"])
def test_an_install_without_the_s3_extra_is_told_how_to_add_it(
    missing: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    from durabench.errors import ConfigError
    from durabench.results.store import S3_EXTRA_HINT, open_store
    from durabench.settings.values import Settings

    monkeypatch.delitem(sys.modules, "durabench.results.store.object_store", raising=False)
    # import fails as if not installed: its submodules too, which an earlier test may have
    # imported (a cached ``botocore.exceptions`` imports without its parent)
    for name in [missing, *(n for n in sys.modules if n.startswith(f"{missing}."))]:
        monkeypatch.setitem(sys.modules, name, None)
    settings = Settings(home=tmp_path, results_url="s3://bucket/runs")
    with pytest.raises(ConfigError) as refused:
        open_store(settings)
    assert str(refused.value).startswith(S3_EXTRA_HINT)
    assert "pip install 'durabench[s3]'" in str(refused.value)
