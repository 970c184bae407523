"""Read a JSON file the user gave into a model: every failure is one line naming the file.

Selection files, dataset files and the like fail the same three ways (unreadable, not JSON,
not the shape); each says where and what the file must look like.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from durabench.documents import loads_json
from durabench.errors import ConfigError

__all__ = ["first_error", "read_json_model"]

M = TypeVar("M", bound=BaseModel)


def read_json_model(path: Path, model: type[M], what: str, shape: str) -> M:
    """``path`` parsed as ``model``; ``what`` names the file, ``shape`` shows its form.

    Raises:
        ConfigError: the file cannot be read, is not JSON, or is not in the shape.
    """
    try:
        text = path.read_text()
    except OSError as exc:
        raise ConfigError(f"{what} {path}: cannot read it ({exc.strerror})") from exc
    try:
        doc = loads_json(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{what} {path} is not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
            f"it must be {shape}"
        ) from exc
    try:
        return model.model_validate(doc)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"{what} {path}: {where}: {first['msg']}; it must be {shape}") from None


def first_error(exc: ValidationError) -> str:
    """The first thing pydantic found wrong, on one line: ``tasks.0.task_dir: Field required``.

    A damaged file gives a command one line to print, never pydantic's page of errors.
    """
    errors = exc.errors()
    if not errors:
        return "not valid"
    first = errors[0]
    where = ".".join(str(p) for p in first["loc"])
    what = " ".join(str(first["msg"]).split())
    return f"{where}: {what}" if where else what
