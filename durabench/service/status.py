"""durabench's exit classes in the benchmark service's words.

The service knows four ways a generation ends (``success | max_time | max_turns | error``)
and grades only a generation that ended on its own. durabench knows eleven exit classes, so
they are folded here, in one table, rather than wherever a status is needed:

* A generation that finished on its own is ``success`` even when it wrote no code or its
  code does not build: that is the model's answer, and the grader scores it.
* A generation stopped by its time limit is ``max_time``; one stopped by another budget
  (context window, output-token cap) is ``max_turns``. Neither is sent for grading: the
  reference runner records them as ``did_not_complete`` without calling the service.
* An agent crash or an infrastructure failure is ``error`` (``generation_error``, not
  graded); infra attempts are also never scored (they are retried and excluded).
"""

from __future__ import annotations

from types import MappingProxyType

from durabench.models.verdict import ExitClass
from durabench.service.wire import EvalStatus, GenerationStatus

__all__ = ["GENERATION_STATUS", "generation_status", "ungraded_status"]

GENERATION_STATUS: MappingProxyType[str, GenerationStatus] = MappingProxyType(
    {
        "completed": "success",
        "model_no_code": "success",
        "model_build_failure": "success",
        "model_timeout": "max_time",
        "model_context_exhausted": "max_turns",
        "model_output_cap": "max_turns",
        "model_budget": "max_turns",
        "model_agent_error": "error",
        "infra_usage_cap": "error",
        "infra_auth": "error",
        "infra_rate_limit": "error",
        "infra_spend_cap": "error",
        "infra_other": "error",
    }
)
"""Exit class to generation status; a test checks every exit class is here."""

_UNGRADED: MappingProxyType[GenerationStatus, EvalStatus] = MappingProxyType(
    {"max_time": "did_not_complete", "max_turns": "did_not_complete", "error": "generation_error"}
)


def generation_status(exit_class: ExitClass) -> GenerationStatus:
    """The generation status of an attempt with this exit class."""
    return GENERATION_STATUS[exit_class]


def ungraded_status(status: GenerationStatus) -> EvalStatus | None:
    """The eval status a generation gets without calling the service, or ``None`` to grade it."""
    return _UNGRADED.get(status)
