"""Planning in the unit tier, which has no Docker daemon and no remote backend.

The backend's preflight (:func:`durabench.planning.backend_check.check_backend`) is the
integration tier's subject (``test_backend_preflight``, ``test_daytona_refusals``); a unit
test of the plan's other checks plans without it.
"""

from __future__ import annotations

from activities.plan import PlanActivities
from durabench.settings.values import Settings


def unit_plan_activities(settings: Settings) -> PlanActivities:
    """Planning activities that make no backend preflight."""
    return PlanActivities(settings, backend_check=lambda _settings: ())
