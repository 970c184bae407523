"""docker-compose.yml and compose/local.yml validate, pin current images, share the worker.

Here, not in the unit tier: ``docker compose config`` needs Docker's compose tool, and
the unit tier needs no Docker.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
COMPOSE = REPO / "docker-compose.yml"
LOCAL = REPO / "compose" / "local.yml"

pytestmark = pytest.mark.docker


def _compose() -> list[str]:
    if shutil.which("docker"):
        probe = subprocess.run(["docker", "compose", "version"], capture_output=True, check=False)
        if probe.returncode == 0:
            return ["docker", "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    if os.environ.get("DURABENCH_REQUIRE_DOCKER") == "1":
        pytest.fail("neither `docker compose` nor `docker-compose` is installed")
    pytest.skip("no docker compose (set DURABENCH_REQUIRE_DOCKER=1 to fail instead)")


def _config(file: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DURABENCH_")}
    done = subprocess.run(
        [*_compose(), "-f", str(file), "config", *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _services(file: Path) -> dict[str, dict[str, object]]:
    loaded = yaml.safe_load(_config(file))
    services: dict[str, dict[str, object]] = loaded["services"]
    return services


def test_compose_file_validates_with_every_service() -> None:
    services = set(_config(COMPOSE, "--services").split())
    assert services == {
        "postgresql",
        "temporal-admin-tools",
        "temporal",
        "temporal-create-namespace",
        "temporal-ui",
        "init",
        "worker",
    }


def test_images_are_current_pinned_and_workers_reach_the_host_docker() -> None:
    text = _config(COMPOSE)
    images = re.findall(r"image: (\S+)", text)
    assert images and all(re.search(r":\d[\w.-]*$", image) for image in images), images
    assert not [image for image in images if "auto-setup" in image], images
    assert any(image.startswith("temporalio/server:") for image in images), images
    assert any(image.startswith("temporalio/admin-tools:") for image in images), images
    assert "/var/run/docker.sock" in text
    dockerfile = (REPO / "Dockerfile").read_text()
    assert re.search(r"^ARG BASE_IMAGE=python:\d+\.\d+\.\d+-slim", dockerfile, re.MULTILINE)
    assert re.search(r"^FROM \$\{BASE_IMAGE\}", dockerfile, re.MULTILINE)


def test_the_server_gets_its_schema_dynamic_config_and_namespace_first() -> None:
    services = _services(COMPOSE)
    assert services["temporal"]["depends_on"] == {
        "temporal-admin-tools": {"condition": "service_completed_successfully"}
    }
    env = services["temporal"]["environment"]
    assert isinstance(env, dict)
    config = REPO / "compose" / "dynamicconfig" / Path(str(env["DYNAMIC_CONFIG_FILE_PATH"])).name
    assert config.is_file(), config
    assert services["init"]["depends_on"] == {
        "temporal-create-namespace": {"condition": "service_completed_successfully"}
    }
    scripts = REPO / "compose" / "scripts"
    for name in ("setup-postgres.sh", "create-namespace.sh"):
        assert (scripts / name).is_file() and os.access(scripts / name, os.X_OK), name


def test_local_profile_differs_from_production_only_in_the_temporal_service() -> None:
    production, local = _services(COMPOSE), _services(LOCAL)
    assert set(local) == {"temporal", "init", "worker"}
    assert "start-dev" in local["temporal"]["command"]  # type: ignore[operator]
    for name in ("init", "worker"):
        prod, here = dict(production[name]), dict(local[name])
        for key in ("image", "build", "depends_on"):
            prod.pop(key), here.pop(key)
        prod_env, local_env = prod.pop("environment"), here.pop("environment")
        assert isinstance(prod_env, dict) and isinstance(local_env, dict)
        assert set(prod_env) == set(local_env)
        changed = {k for k in prod_env if prod_env[k] != local_env[k]}
        assert changed <= {"DURABENCH_BASE_IMAGE"}, changed
        assert prod == here, name
    build = local["worker"]["build"]
    assert isinstance(build, dict) and build["args"]["BASE_IMAGE"] == "durabench-base:bookworm"
