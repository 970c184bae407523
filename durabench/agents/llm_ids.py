"""The shape of a model name, checked at plan time before anyone approves a paid run.

A typo such as ``Claude Sonnet 4.5`` would otherwise surface an hour later as a model error in
every attempt. Provider ids are lower case, without spaces (``claude-sonnet-4-5``,
``anthropic/claude-opus-4-1``, ``gpt-5-codex``, ``gemini-2.5-pro``, Bedrock's
``us.anthropic.claude-3-7-sonnet-20250219-v1:0``); ``none`` is for agents without a model.

The id is also checked against the agent's provider (:func:`check_known_model`): a typo
(``claude-sonet-4-5``, ``claude-sonnet-4.5``) or another provider's model would pass the
shape check and fail every attempt. Providers add models faster than durabench is
released, so a team lists its own in ``$DURABENCH_HOME/models.txt``, or a person accepts
one id with ``--allow-unknown-model``.

Named ``llm_ids`` and kept beside the agents that are asked for a model: in durabench
"models" are the data types (:mod:`durabench.models`); these are the LLMs' ids.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from pathlib import Path

from durabench.errors import ConfigError
from durabench.models.config import ModelApi
from durabench.settings.environment import ALLOW_UNKNOWN_MODEL_ENV, unknown_models_allowed

__all__ = [
    "ALLOW_UNKNOWN_MODEL_ENV",
    "KNOWN_MODELS",
    "TEAM_MODELS_FILE",
    "check_known_model",
    "check_model_name",
    "served_model_matches",
]

"""Set to ``true`` (``--allow-unknown-model``) to run a model id no list here names."""

TEAM_MODELS_FILE = "models.txt"
"""In ``DURABENCH_HOME``: the team's model ids beyond :data:`KNOWN_MODELS`, one a line."""

KNOWN_MODELS: Mapping[ModelApi, tuple[str, ...]] = {
    "anthropic": (
        "claude-opus-4-5",
        "claude-opus-4-1",
        "claude-opus-4-0",
        "claude-sonnet-4-5",
        "claude-sonnet-4-0",
        "claude-haiku-4-5",
        "claude-3-7-sonnet-latest",
        "claude-3-5-haiku-latest",
    ),
    "openai": (
        "gpt-5",
        "gpt-5-mini",
        "gpt-5-nano",
        "gpt-5-codex",
        "gpt-5-codex-mini",
        "gpt-5.1",
        "gpt-5.1-codex",
        "gpt-5.1-codex-mini",
        "gpt-5.1-codex-max",
        "gpt-4.1",
        "o3",
        "o4-mini",
        "codex-mini-latest",
    ),
    "gemini": (
        "gemini-3-pro-preview",
        "gemini-2.5-pro",
        "gemini-2.5-flash",
        "gemini-2.5-flash-lite",
    ),
}
"""Each provider's model ids (a dated snapshot of one, ``-YYYYMMDD``, is that model)."""

_MODEL = re.compile(r"[a-z0-9][a-z0-9._:@/-]*")
_SNAPSHOT = re.compile(r"-\d{8}")


def served_model_matches(requested: str, served: str) -> bool:
    """Whether ``served`` is ``requested`` or its dated snapshot (``x`` → ``x-20251101``)."""
    if served == requested:
        return True
    return served.startswith(requested) and bool(_SNAPSHOT.fullmatch(served[len(requested) :]))


def check_model_name(model: str) -> None:
    """Accept a provider's model id.

    Raises:
        ConfigError: ``model`` is not shaped like one; the message shows valid examples.
    """
    if not _MODEL.fullmatch(model):
        raise ConfigError(
            f"model {model!r} is not a model id: use the provider's id, lower case and "
            "without spaces, such as claude-sonnet-4-5, anthropic/claude-opus-4-1 or "
            "gpt-5-codex (none for agents without a model)"
        )


def _team_models(home: Path) -> set[str]:
    path = home / TEAM_MODELS_FILE
    if not path.is_file():
        return set()
    lines = (line.split("#", 1)[0].strip() for line in path.read_text().splitlines())
    return {line for line in lines if line}


def _is_known(model: str, known: set[str]) -> bool:
    return any(served_model_matches(k, model) for k in known)


def check_known_model(model: str, api: ModelApi, home: Path, *, agent: str = "the agent") -> None:
    """Accept ``model`` if ``api`` has it, the team lists it, or unknown ids are allowed.

    ``agent`` is named in the refusal: the agent that calls ``api``.

    Routed ids (``anthropic/...``, Bedrock's ``us.anthropic....:0``, Vertex's ``...@...``)
    name a deployment rather than a model, and are taken as they are.

    Raises:
        ConfigError: no list has ``model``; the message names the closest id, or the
            provider that has it, and how to allow it.
    """
    if any(c in model for c in "/:@") or unknown_models_allowed():
        return
    if _is_known(model, set(KNOWN_MODELS[api]) | _team_models(home)):
        return
    allow = (
        f"if {model} is right, add it to {home / TEAM_MODELS_FILE} (one id a line) or "
        "pass --allow-unknown-model"
    )
    other = next((a for a, ids in KNOWN_MODELS.items() if _is_known(model, set(ids))), None)
    if other is not None:
        raise ConfigError(
            f"model {model} is one of {other}'s; {agent} calls {api} models, such as "
            f"{KNOWN_MODELS[api][0]}: choose one, or an agent that calls {other}; {allow}"
        )
    close = difflib.get_close_matches(model, KNOWN_MODELS[api], n=1, cutoff=0.6)
    guess = f"did you mean {close[0]}? " if close else ""
    raise ConfigError(f"unknown {api} model {model}: {guess}{allow}")
