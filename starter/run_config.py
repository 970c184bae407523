"""``starter run --config run.toml`` and ``--print-config``: a run's request as a file.

The file is a :class:`~durabench.models.run.RunRequest` in TOML, validated as the flags'
request is, so a run can be kept, reviewed and repeated as Harbor's ``-c job.yaml`` is.
``--print-config`` writes the request the flags make; that file, given to ``--config``,
asks for the same request. What a file leaves out is what the flags leave out: the
settings' defaults (``DURABENCH_MAX_SPEND_USD``, ``DURABENCH_BUDGET_TOKENS``, ...) fill
it, so a file without a spend cap keeps the machine's. Without a ``run_id`` in it, each
run gets a new id (the file can be used again). A file never approves (``approved_by``:
``--yes`` or ``starter approve``) nor allows unpaired runs (``allow_unpaired``: only
``ALLOW_UNPAIRED_SINGLE_CONFIG=true``, as for the flags). Relative paths in the file are
taken from the file's directory.
"""

from __future__ import annotations

import json
import math
import tomllib
import types
import typing
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import click
from pydantic import BaseModel, ValidationError

from durabench.documents import loads_toml
from durabench.errors import ConfigError
from durabench.ids import check_id
from durabench.models.run import RunRequest
from durabench.planning.plan import UNPAIRED_ENV
from durabench.settings.values import Settings
from starter.run_request import RunOptions, new_run_id, run_source, settings_defaults

__all__ = ["dump_request", "load_request", "refuse_flags_beside_config"]

_NOT_IN_FILE = {
    "approved_by": "a file does not approve; use --yes or starter approve",
    "allow_unpaired": (
        "a file does not allow unpaired runs; remove it, and to allow them set "
        f"{UNPAIRED_ENV}=true where starter run runs (see docs/running.md, Run policy)"
    ),
}
"""Request fields a file never sets, and what to do instead."""
_PATHS = ("selection", "benchmarks_dir", "dataset_file")
"""Request fields that name files or directories."""
_BARE_KEY = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def _string(text: str) -> str:
    """A TOML basic string: JSON's escapes are TOML's, and DEL is escaped too."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _key(key: str) -> str:
    return key if key and set(key) <= _BARE_KEY else _string(key)


def _value(value: Any) -> str:
    """One TOML value; tables are written by :func:`_table`."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, list | tuple):
        return f"[{', '.join(_value(v) for v in value)}]"
    raise TypeError(f"no TOML value for {type(value).__name__}")


def _table(path: tuple[str, ...], data: Mapping[str, Any]) -> list[str]:
    """``data``'s values, then each of its tables under its ``[path]`` header."""
    lines = [f"{_key(k)} = {_value(v)}" for k, v in data.items() if not isinstance(v, dict)]
    for key, sub in data.items():
        if isinstance(sub, dict) and sub:
            header = ".".join(_key(p) for p in (*path, key))
            lines += ["", f"[{header}]", *_table((*path, key), sub)]
    return lines


def dump_request(request: RunRequest, *, with_run_id: bool) -> str:
    """``request`` as the TOML ``--config`` reads; ``with_run_id=False`` leaves its id out."""
    exclude = {*_NOT_IN_FILE, *(() if with_run_id else ("run_id",))}
    data = request.model_dump(mode="python", exclude_none=True, exclude=exclude)
    return "\n".join(_table((), data)) + "\n"


def _model_of(annotation: Any) -> type[BaseModel] | None:
    """The model a field holds (``X | None`` included), or ``None``."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        models = [m for m in map(_model_of, typing.get_args(annotation)) if m is not None]
        return models[0] if len(models) == 1 else None
    return None


def _unknown_keys(model: type[BaseModel], data: Mapping[str, Any], at: str = "") -> Iterable[str]:
    """Keys of ``data`` that no field of ``model`` (or of its nested models) has."""
    for key, value in data.items():
        field = model.model_fields.get(key)
        if field is None:
            yield f"{at}{key}"
        elif isinstance(value, dict) and (sub := _model_of(field.annotation)) is not None:
            yield from _unknown_keys(sub, value, f"{at}{key}.")


def _refused(path: Path, why: str) -> click.BadParameter:
    return click.BadParameter(f"{path}: {why}", param_hint="--config")


def _source(request: RunRequest) -> str:
    """What a generated run id starts with: :func:`run_source` of the request's fields."""
    return run_source(
        RunOptions(
            suite=request.suite,
            selection=request.selection,
            dataset_file=request.dataset_file,
            rerun_of=request.rerun_of,
            dataset_name=request.service.dataset if request.service else None,
        )
    )


def load_request(
    path: Path,
    settings: Settings,
    *,
    allow_unpaired: bool,
    stamp: str,
    run_id: str | None = None,
) -> RunRequest:
    """The request in the TOML file at ``path``; ``run_id`` (``--run-id``) over the file's.

    A key the file leaves out takes the default the flags' request takes from
    ``settings``; ``allow_unpaired`` is ``ALLOW_UNPAIRED_SINGLE_CONFIG=true``, read by the
    caller as for the flags.

    Raises:
        click.BadParameter: the file is not TOML, names a key the request has not, sets
            ``approved_by`` or ``allow_unpaired``, or a value is refused (the message
            names the key and why).
    """
    try:
        data = loads_toml(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise _refused(path, f"not a readable TOML file ({exc})") from exc
    for key, instead in _NOT_IN_FILE.items():
        if key in data:
            raise _refused(path, f"{key}: {instead}")
    unknown = sorted(_unknown_keys(RunRequest, data))
    if unknown:
        raise _refused(path, f"{', '.join(unknown)}: no such key of a run request")
    for key in _PATHS:
        if isinstance(data.get(key), str):
            data[key] = str((path.parent / Path(data[key]).expanduser()).resolve())
    data = {**settings_defaults(settings), **data, "allow_unpaired": allow_unpaired}
    given = run_id or data.get("run_id")
    try:
        request = RunRequest.model_validate({**data, "run_id": given or "pending"})
        if given:
            check_id(given, "run id")
    except ValidationError as exc:
        said = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'file'}: {e['msg']}" for e in exc.errors()
        )
        raise _refused(path, said) from exc
    except ConfigError as exc:
        raise _refused(path, f"run_id: {exc}") from exc
    if given:
        return request
    return request.model_copy(update={"run_id": new_run_id(_source(request), stamp)})


def refuse_flags_beside_config(ctx: click.Context, names: Iterable[str]) -> None:
    """Refuse request flags given with ``--config``: the file holds the request.

    Raises:
        click.UsageError: names the flags, and says to edit the file instead.
    """
    flags: dict[str, list[str]] = {}
    for param in ctx.command.params:  # --baseline-only and --full-only share one name
        if param.name:
            flags.setdefault(param.name, []).extend(o for o in param.opts if o.startswith("--"))
    given = [
        "/".join(flags.get(name, [name]))
        for name in names
        if ctx.get_parameter_source(name) not in (None, click.core.ParameterSource.DEFAULT)
    ]
    if given:
        raise click.UsageError(
            f"--config holds the request: {', '.join(given)} cannot change it; edit the "
            "file (only --run-id and how this command starts the run go beside it)"
        )
