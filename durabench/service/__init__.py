"""The benchmark service: a client for its protocol, its statuses, gradings kept on disk.

No Temporal here: ``activities/grading.py`` reads the keys, builds a client and calls
:func:`grade` and :func:`final_score`.
"""

from durabench.service.auth import (
    BEARER_KEY_ENV,
    DESCOPE_KEY_ENV,
    AuthKind,
    ServiceAuth,
    service_auth_from_env,
)
from durabench.service.client import ServiceClient, Sleep
from durabench.service.grading import Generation, final_score, grade
from durabench.service.payloads import (
    EvaluateAttemptInput,
    EvaluateAttemptOutput,
    ScoreRunInput,
    ScoreRunOutput,
    ServiceApi,
    ServiceTarget,
)
from durabench.service.preflight import check_service
from durabench.service.records import (
    RunScore,
    TaskGrade,
    grade_path,
    load_grades,
    pick_grades,
    score_path,
)
from durabench.service.retry import ServiceRetry, parse_retry_after
from durabench.service.run_grading import grade_attempt, score_lane
from durabench.service.status import GENERATION_STATUS, generation_status, ungraded_status
from durabench.service.wire import (
    EvalResult,
    EvalResultData,
    EvalStatus,
    EvaluateResponseRequest,
    FinalScoreRequest,
    FinalScoreResponse,
    GenerationStatus,
    PayloadType,
)
from durabench.service.wire_v1 import (
    V1DatasetTask,
    V1DatasetTasks,
    V1EvalRequest,
    V1EvalResponse,
    V1Payload,
    V1ScoreRequest,
    V1ScoreResponse,
    V1TaskEval,
)

__all__ = [
    "BEARER_KEY_ENV",
    "DESCOPE_KEY_ENV",
    "GENERATION_STATUS",
    "AuthKind",
    "EvalResult",
    "EvalResultData",
    "EvalStatus",
    "EvaluateAttemptInput",
    "EvaluateAttemptOutput",
    "EvaluateResponseRequest",
    "FinalScoreRequest",
    "FinalScoreResponse",
    "Generation",
    "GenerationStatus",
    "PayloadType",
    "RunScore",
    "ScoreRunInput",
    "ScoreRunOutput",
    "ServiceApi",
    "ServiceAuth",
    "ServiceClient",
    "ServiceRetry",
    "ServiceTarget",
    "Sleep",
    "TaskGrade",
    "V1DatasetTask",
    "V1DatasetTasks",
    "V1EvalRequest",
    "V1EvalResponse",
    "V1Payload",
    "V1ScoreRequest",
    "V1ScoreResponse",
    "V1TaskEval",
    "check_service",
    "final_score",
    "generation_status",
    "grade",
    "grade_attempt",
    "grade_path",
    "load_grades",
    "parse_retry_after",
    "pick_grades",
    "score_lane",
    "score_path",
    "service_auth_from_env",
    "ungraded_status",
]
