"""Text tasks of a service's dataset, as Harbor task directories durabench can run.

A dataset the service hosts (``GET /v1/datasets/{name}/tasks``) or a dataset file
(``{"dataset_name": ..., "tests": [{"id": ..., "question": ...}]}``) holds questions, not
task directories. Writing each question out as a small Harbor task (the question as
``instruction.md``, the base image as its environment) lets it run like any other task:
in a sandbox, paired, classified; the agent's final message is the answer the service
grades. The directories live in the run's results directory (``dataset/<name>/``), written
once when the run is planned.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from durabench.atomic import atomic_write
from durabench.errors import ConfigError
from durabench.json_files import read_json_model
from durabench.models.task import TEXT_CATEGORY
from durabench.service.wire_v1 import V1DatasetTask

__all__ = ["DatasetFile", "dataset_dir", "read_dataset_file", "write_text_tasks"]

DEFAULT_TIME_LIMIT_SEC = 600
"""The agent's time limit when the dataset sets none."""

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_SAFE_ID = re.compile(r"(?!\.\.?$)[A-Za-z0-9._:-]+")
"""A task id that is one path component (results live under ``tasks/<task_id>/``)."""

_DOCKERFILE = "ARG BASE_IMAGE=python:3.12-slim\nFROM ${BASE_IMAGE}\nWORKDIR /workspace\n"
_TEST = "#!/bin/sh\n# Graded by the benchmark service, not here.\nexit 0\n"
_ASK = "\n\nAnswer in your final message, with the answer alone.\n"


class DatasetFile(BaseModel):
    """A dataset file (``--dataset-file``); other fields are kept, unused."""

    model_config = ConfigDict(frozen=True, extra="allow")

    dataset_name: str | None = None
    tests: tuple[V1DatasetTask, ...]


def dataset_dir(run_root: Path, name: str) -> Path:
    """Where a run's dataset task directories go.

    Inside the run, so another run of the same dataset name never rewrites the questions
    under a run still going.
    """
    return run_root / "dataset" / _UNSAFE.sub("-", name)


def read_dataset_file(path: Path) -> DatasetFile:
    """Parse a dataset file.

    Raises:
        ConfigError: it cannot be read, is not JSON, or has no ``tests`` list; the message
            says which.
    """
    shape = '{"dataset_name": ..., "tests": [{"id": ..., "question": ...}]}'
    return read_json_model(path, DatasetFile, "dataset file", shape)


def _toml_string(text: str) -> str:
    return json.dumps(text)  # a JSON string is a valid TOML basic string


def write_text_tasks(root: Path, tasks: Iterable[V1DatasetTask]) -> list[Path]:
    """Write each text task as a Harbor task directory under ``root``; their paths.

    Raises:
        ConfigError: a task has no question, or two tasks share an id.
    """
    dirs: dict[str, Path] = {}
    for task in tasks:
        if not task.question:
            raise ConfigError(f"dataset task {task.id!r} has no question: only text tasks run")
        if not _SAFE_ID.fullmatch(task.id):
            raise ConfigError(
                f"dataset task id {task.id!r} cannot name a results directory: use letters, "
                "digits, '.', '_', '-' and ':' only"
            )
        if task.id.lower() in dirs:
            raise ConfigError(f"the dataset lists task {task.id!r} twice (ids ignore case)")
        where = root / task.id
        limit = int(task.timeout or DEFAULT_TIME_LIMIT_SEC)
        atomic_write(
            where / "task.toml",
            f'version = "1.0"\n\n[task]\nid = {_toml_string(task.id)}\n'
            f'category = "{TEXT_CATEGORY}"\ntime_limit_sec = {limit}\n',
        )
        atomic_write(where / "instruction.md", task.question.rstrip() + _ASK)
        atomic_write(where / "environment" / "Dockerfile", _DOCKERFILE)
        atomic_write(where / "tests" / "test.sh", _TEST)
        dirs[task.id.lower()] = where
    return list(dirs.values())
