"""Scrubbing secret values out of text and files before they are kept.

Agents print what they see (``env``, tool output, error messages), so a token handed to an
agent can end up in its transcript. Everything an attempt leaves on disk, and every reason
that travels through Temporal, passes through here first.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from durabench.models.config import LaneConfig

__all__ = ["REDACTED", "scrub_bytes", "scrub_text", "scrub_tree", "secret_values"]

REDACTED = "[REDACTED]"
_MIN_LEN = 6
"""Shorter values are not scrubbed: they would mangle ordinary text and guard nothing."""


def secret_values(
    configs: Iterable[LaneConfig], environ: Mapping[str, str], names: Iterable[str] = ()
) -> tuple[str, ...]:
    """The values of the secret variables set in ``environ``.

    Those are every token variable the ``configs`` name, and ``names`` (agents' API keys).
    """
    names = {*names, *(c.mcp.token_env for c in configs if c.mcp is not None)}
    values = {environ[n] for n in names if len(environ.get(n, "")) >= _MIN_LEN}
    return tuple(sorted(values, key=len, reverse=True))


def scrub_text(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret value replaced by ``[REDACTED]``."""
    for value in secrets:
        text = text.replace(value, REDACTED)
    return text


def scrub_bytes(data: bytes, needles: Iterable[bytes]) -> bytes:
    """``data`` with every needle (an encoded secret) replaced by ``[REDACTED]``."""
    for needle in needles:
        data = data.replace(needle, REDACTED.encode())
    return data


def scrub_tree(root: Path, secrets: Iterable[str]) -> int:
    """Scrub every file under ``root`` in place; return how many files held a secret."""
    needles = [s.encode() for s in secrets]
    if not needles:
        return 0
    dirty = 0
    for path in (p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        clean = data
        for needle in needles:
            clean = clean.replace(needle, REDACTED.encode())
        if clean != data:
            path.write_bytes(clean)
            dirty += 1
    return dirty
