"""Check, before a run is approved, that its service will grade it with the worker's key.

A refused key (a v1 run with only the bearer key, a key the service does not know) or an
endpoint the service lacks concerns every task, whatever the answers: found at grading
time, it comes after the paid agent sessions. So the plan asks the service for a score of
no tasks, with the credentials the gradings will use, and refuses with the very error a
grading would get.
"""

from __future__ import annotations

from durabench.errors import ServiceAuthError, ServiceRejected, ServiceUnsupported
from durabench.service.client import ServiceClient
from durabench.service.grading import service_run_id
from durabench.service.payloads import ServiceTarget
from durabench.service.wire import FinalScoreRequest
from durabench.service.wire_v1 import V1ScoreRequest

__all__ = ["PREFLIGHT_LANE", "check_service"]

PREFLIGHT_LANE = "preflight"
"""The v1 check scores run ``<run-id>.preflight``, apart from the lanes' own runs."""


async def check_service(client: ServiceClient, target: ServiceTarget, run_id: str) -> None:
    """Ask for the score of no tasks (legacy ``/final-score/``, v1 ``/v1/score``).

    A legacy 404 (no such endpoint or dataset: the request names nothing else) refuses
    too. Any other refusal (a service that wants at least one task, a v1 run it does not
    know) says nothing about the gradings, so it passes.

    Raises:
        ServiceAuthError: the key is missing or not allowed (its message says which key).
        ServiceUnsupported: the service lacks the scoring endpoint of this API.
        ServiceRejected: a legacy service found no such endpoint or dataset (404).
        ServiceError: the service stayed busy or down, or answered out of protocol.
    """
    try:
        if target.api == "v1":
            await client.score(
                V1ScoreRequest(
                    run_id=service_run_id(run_id, PREFLIGHT_LANE),
                    dataset=target.dataset,
                    evaluation_results={},
                )
            )
        else:
            await client.final_score(
                FinalScoreRequest(evaluation_results={}, dataset=target.dataset)
            )
    except (ServiceAuthError, ServiceUnsupported):
        raise
    except ServiceRejected as exc:
        if target.api == "legacy" and exc.status == 404:
            raise
