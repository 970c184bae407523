"""Every wire or disk format of durabench, as pydantic models."""

from durabench.models.config import LaneConfig, McpServer
from durabench.models.payloads import (
    AgentRunOutput,
    AttemptRef,
    PairInput,
    PreparedImage,
    ProgressOutput,
    ProvisionInput,
    ProvisionOutput,
    RecordRunInput,
    ReportInput,
    ReportOutput,
    RunOutcome,
    RunPhase,
    VerifyOutput,
)
from durabench.models.results import (
    AttemptResult,
    AttemptStatus,
    LaneSummary,
    PairResult,
    PhaseTiming,
    RunResult,
)
from durabench.models.run import Approval, ConfigMode, Rejection, RunPlan, RunRequest, TaskRef
from durabench.models.task import TaskSpec

__all__ = [
    "AgentRunOutput",
    "Approval",
    "AttemptRef",
    "AttemptResult",
    "AttemptStatus",
    "ConfigMode",
    "LaneConfig",
    "LaneSummary",
    "McpServer",
    "PairInput",
    "PairResult",
    "PhaseTiming",
    "PreparedImage",
    "ProgressOutput",
    "ProvisionInput",
    "ProvisionOutput",
    "RecordRunInput",
    "Rejection",
    "ReportInput",
    "ReportOutput",
    "RunOutcome",
    "RunPhase",
    "RunPlan",
    "RunRequest",
    "RunResult",
    "TaskRef",
    "TaskSpec",
    "VerifyOutput",
]
