"""The price a person approves: what a run is expected to cost, as a range."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["CostEstimate"]


class CostEstimate(BaseModel):
    """Expected cost: sessions (pairs x lanes) x cost of a session, low and high."""

    model_config = ConfigDict(frozen=True)

    sessions: int
    """Agent sessions the plan runs (tasks x lanes; infra retries not counted)."""
    low_usd: float | None
    """Every session at the low cost of a session; ``None``: the model is unpriced."""
    high_usd: float | None
    """Every session at the high cost of a session; ``None``: the model is unpriced."""
    session_high_usd: float | None
    """The high cost of one session: what a pair is expected to cost under a spend cap is
    twice it (both lanes)."""
    basis: str
    """Where the tokens per session come from: earlier runs, or the stated default."""

    def line(self) -> str:
        """The plan's price line: ``$12.40 to $48.00 (basis)``, or ``unpriced``."""
        if self.low_usd is None or self.high_usd is None:
            return f"unpriced: the model has no price, and is not priced as zero ({self.basis})"
        return f"${self.low_usd:,.2f} to ${self.high_usd:,.2f} ({self.basis})"

    def restated(self) -> str:
        """What an approval restates (``--cost``): ``12.40-48.00``, or ``unpriced``."""
        if self.low_usd is None or self.high_usd is None:
            return "unpriced"
        return f"{self.low_usd:.2f}-{self.high_usd:.2f}"
