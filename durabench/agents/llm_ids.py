"""The shape of a model name, checked at plan time before anyone approves a paid run.

A typo such as ``Claude Sonnet 4.5`` would otherwise surface an hour later as a model error in
every attempt. Provider ids are lower case, without spaces (``claude-sonnet-4-5``,
``anthropic/claude-opus-4-1``, ``gpt-5-codex``, ``gemini-2.5-pro``, Bedrock's
``us.anthropic.claude-3-7-sonnet-20250219-v1:0``); ``none`` is for agents without a model.

Named ``llm_ids`` and kept beside the agents that are asked for a model: in durabench
"models" are the data types (:mod:`durabench.models`); these are the LLMs' ids.
"""

from __future__ import annotations

import re

from durabench.errors import ConfigError

__all__ = ["check_model_name", "served_model_matches"]

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
