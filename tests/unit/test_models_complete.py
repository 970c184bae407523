"""Every message model is complete when its module is imported.

A model naming a type defined later in its module is left for pydantic to rebuild on
first use. In a worker whose workflow sandbox imports ``workflows`` once for every
workflow (:mod:`runtime.workflow_runner`), that rebuild runs where the module's namespace
is not at hand, and decoding the workflow's input fails. Defining each type before its use
keeps every model usable wherever it is first decoded.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

from pydantic import BaseModel

import durabench.models


def _models() -> list[type[BaseModel]]:
    found: list[type[BaseModel]] = []
    for info in pkgutil.iter_modules(durabench.models.__path__):
        module = importlib.import_module(f"durabench.models.{info.name}")
        for obj in vars(module).values():
            is_model = inspect.isclass(obj) and issubclass(obj, BaseModel)
            if is_model and obj.__module__ == module.__name__:
                found.append(obj)
    return found


def test_every_model_is_complete_at_import() -> None:
    models = _models()
    assert len(models) > 20
    incomplete = [f"{m.__module__}.{m.__qualname__}" for m in models if not m.__pydantic_complete__]
    assert incomplete == []
