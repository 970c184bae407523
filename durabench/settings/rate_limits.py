"""The shape of a model's rate limits, as a team states them in a setting.

It lives with the settings that read it (``DURABENCH_MODEL_RATE_LIMITS``), below the
domain's models, which import settings and never the other way.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from durabench.settings.numbers import MAX_NUMBER

__all__ = ["ModelRateLimit"]


class ModelRateLimit(BaseModel):
    """A model's rate limits for one organization (``DURABENCH_MODEL_RATE_LIMITS``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rpm: int = Field(gt=0, le=MAX_NUMBER)
    """Requests per minute."""
    tpm: int = Field(gt=0, le=MAX_NUMBER)
    """Input tokens per minute (what providers count against a limit; cache reads are
    not counted by most current models)."""
