"""What the worker reads of an attempt: its logs, its transcript, its workspace.

Everything in a sandbox is the agent's to shape, so every read is capped
(:mod:`durabench.sandbox.limits`); these are the caps per kind of read, from settings.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from durabench.sandbox.limits import ReadLimits

__all__ = ["AttemptLimits"]

_MIB = 1 << 20


class AttemptLimits(BaseModel):
    """Caps on what one attempt's phases read from its sandbox."""

    model_config = ConfigDict(frozen=True)

    logs: ReadLimits = ReadLimits(
        max_file_bytes=64 * _MIB, max_total_bytes=256 * _MIB, max_stream_bytes=1024 * _MIB
    )
    """The log directories collected to the host."""
    transcript_bytes: int = Field(default=64 * _MIB, gt=0)
    """The agent's stdout read for classification: its last bytes when it is longer."""
    workspace: ReadLimits = ReadLimits(
        max_file_bytes=_MIB,
        max_total_bytes=256 * _MIB,
        max_files=200_000,
        max_stream_bytes=2048 * _MIB,
    )
    """The workspace, read before and after the agent for the diff (files over 1 MiB are
    not source: left out, as always)."""

    @classmethod
    def of(cls, file_mb: int, total_mb: int, files: int) -> AttemptLimits:
        """Limits from the worker's settings (``DURABENCH_COLLECT_*``)."""
        logs = ReadLimits(
            max_file_bytes=file_mb * _MIB,
            max_total_bytes=total_mb * _MIB,
            max_files=files,
            max_stream_bytes=4 * total_mb * _MIB,
        )
        workspace = cls().workspace.model_copy(update={"max_files": 20 * files})
        return cls(logs=logs, transcript_bytes=file_mb * _MIB, workspace=workspace)
