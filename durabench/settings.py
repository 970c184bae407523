"""Settings read once from the environment, so every process agrees on them.

The starter, the worker and the tests read the same variables; nothing here is a secret
(secrets are read by activities at the last moment, by name).
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["DEFAULT_BASE_IMAGE", "Settings"]

DEFAULT_BASE_IMAGE = "python:3.12-slim"


class Settings(BaseModel):
    """Machine-level settings of durabench."""

    model_config = ConfigDict(frozen=True)

    home: Path
    """State directory (``DURABENCH_HOME``, default ``~/.durabench``): runs, server DB, logs."""
    temporal_address: str | None = None
    """``TEMPORAL_ADDRESS``; unset means the embedded dev server on localhost:7233."""
    namespace: str = "default"
    """``TEMPORAL_NAMESPACE``."""
    task_queue: str = "durabench"
    """``DURABENCH_TASK_QUEUE``: the shared queue for workflows and host-independent work."""
    base_image: str = DEFAULT_BASE_IMAGE
    """``DURABENCH_BASE_IMAGE``: the ``BASE_IMAGE`` build argument of task Dockerfiles."""
    timeout_multiplier: float = Field(default=1.0, gt=0)
    """``DURABENCH_TIMEOUT_MULTIPLIER``: scales every task's agent time limit."""
    port: int = 7233
    """Port of the embedded server's frontend (``DURABENCH_PORT``)."""
    ui_port: int = 8233
    """Port of the embedded server's Web UI (``DURABENCH_UI_PORT``)."""

    @classmethod
    def from_env(cls) -> Settings:
        """Read the settings from the environment."""
        env = os.environ
        home = Path(env.get("DURABENCH_HOME") or Path.home() / ".durabench").expanduser()
        return cls(
            home=home,
            temporal_address=env.get("TEMPORAL_ADDRESS") or None,
            namespace=env.get("TEMPORAL_NAMESPACE") or "default",
            task_queue=env.get("DURABENCH_TASK_QUEUE") or "durabench",
            base_image=env.get("DURABENCH_BASE_IMAGE") or DEFAULT_BASE_IMAGE,
            timeout_multiplier=float(env.get("DURABENCH_TIMEOUT_MULTIPLIER") or 1.0),
            port=int(env.get("DURABENCH_PORT") or 7233),
            ui_port=int(env.get("DURABENCH_UI_PORT") or 8233),
        )

    @property
    def address(self) -> str:
        """The Temporal frontend address to connect to."""
        return self.temporal_address or f"localhost:{self.port}"

    @property
    def runs_dir(self) -> Path:
        """Where every run's results directory lives."""
        return self.home / "runs"
