"""Scrubbing secret values out of text and files before they are kept.

Agents print what they see (``env``, tool output, error messages), so a token handed to an
agent can end up in its transcript. Everything an attempt leaves on disk, and every reason
that travels through Temporal, passes through here first.

An agent that means to leak a key can spell it otherwise, so each secret is scrubbed in
the forms it takes without effort too (:func:`secret_forms`): URL-quoted, JSON-escaped,
hex, reversed, and base64 at each of the three alignments it can start at, also wrapped
across lines (``base64`` wraps at 76 columns). An agent set on hiding it (encrypting it,
splitting it) still can: keys must leave through no file at all, and with the model
gateway only a stdio MCP server's token still enters a sandbox.
"""

from __future__ import annotations

import base64
import functools
import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from urllib.parse import quote

__all__ = [
    "REDACTED",
    "scrub_bytes",
    "scrub_text",
    "scrub_tree",
    "secret_forms",
    "secret_values",
]

REDACTED = "[REDACTED]"
_MIN_LEN = 6
"""Shorter values are not scrubbed: they would mangle ordinary text and guard nothing."""


def secret_values(environ: Mapping[str, str], names: Iterable[str]) -> tuple[str, ...]:
    """The values of the variables ``names`` (API keys, MCP tokens) set in ``environ``."""
    values = {environ[n] for n in set(names) if len(environ.get(n, "")) >= _MIN_LEN}
    return tuple(sorted(values, key=len, reverse=True))


def _base64_forms(raw: bytes) -> set[str]:
    forms = set()
    for shift in range(3):  # base64 of the secret wherever it starts in a longer text
        encoded = base64.b64encode(bytes(shift) + raw).decode()
        whole_groups = (shift + len(raw)) // 3  # 3-byte groups made of secret bytes alone
        middle = encoded[(4 if shift else 0) : 4 * whole_groups]
        if len(middle) >= _MIN_LEN:
            forms.add(middle)
            forms.add(middle.replace("+", "-").replace("/", "_"))  # url-safe alphabet
    return forms


@functools.lru_cache(maxsize=256)
def secret_forms(secret: str) -> tuple[str, ...]:
    """``secret`` and the forms it takes when printed without effort, longest first."""
    raw = secret.encode()
    forms = {
        secret,
        quote(secret, safe=""),
        json.dumps(secret)[1:-1],
        raw.hex(),
        secret[::-1],
        *_base64_forms(raw),
    }
    return tuple(sorted((f for f in forms if len(f) >= _MIN_LEN), key=len, reverse=True))


@functools.lru_cache(maxsize=256)
def _wrapped(secret: str) -> re.Pattern[str]:
    """The base64 forms of ``secret`` with a line break allowed between any two letters."""
    forms = sorted(_base64_forms(secret.encode()), key=len, reverse=True)
    return re.compile("|".join(r"(?:\r?\n)?".join(map(re.escape, f)) for f in forms))


@functools.lru_cache(maxsize=256)
def _wrapped_bytes(secret: str) -> re.Pattern[bytes]:
    return re.compile(_wrapped(secret).pattern.encode())


def scrub_text(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret, in each of its :func:`secret_forms`, replaced."""
    for value in secrets:
        for form in secret_forms(value):
            text = text.replace(form, REDACTED)
        if "\n" in text:
            text = _wrapped(value).sub(REDACTED, text)
    return text


def scrub_bytes(data: bytes, needles: Iterable[bytes]) -> bytes:
    """``data`` with every needle (an encoded secret), in each of its forms, replaced."""
    for needle in needles:
        value = needle.decode("utf-8", errors="replace")
        for form in secret_forms(value):
            data = data.replace(form.encode(), REDACTED.encode())
        if b"\n" in data:
            data = _wrapped_bytes(value).sub(REDACTED.encode(), data)
    return data


def scrub_tree(root: Path, secrets: Iterable[str]) -> int:
    """Scrub every file under ``root`` in place; return how many files held a secret."""
    needles = [s.encode() for s in secrets]
    if not needles:
        return 0
    dirty = 0
    for path in (p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        clean = scrub_bytes(data, needles)
        if clean != data:
            path.write_bytes(clean)
            dirty += 1
    return dirty
