"""The one error hierarchy of durabench.

Every error a user can cause says what was wrong and what to do. Third-party errors
(docker, httpx) are translated at the backend boundary with ``raise ... from exc``.

    DurabenchError
    ├── ConfigError                 bad settings, unknown suite/config/agent/backend
    │   ├── UnknownSuite
    │   ├── UnknownConfig
    │   ├── UnknownAgent
    │   ├── UnknownBackend
    │   └── AccountError            a bad accounts file, or an account's secret is missing
    ├── TaskFormatError             a task directory that is not a valid Harbor task
    ├── ResultStoreError            the results store (DURABENCH_RESULTS_URL) failed (transient)
    ├── SandboxError                the sandbox backend failed (transient unless a leaf below)
    │   ├── DockerUnavailable       no Docker daemon answers
    │   ├── FileTooLarge            a file in the sandbox is over what the worker reads
    │   ├── SandboxGone             the sandbox was removed or stopped: no session in it runs
    │   ├── SandboxRefused          the sandbox service refused a request no retry changes
    │   └── ImageBuildError         a task image did not build (log kept)
    ├── AgentError
    │   ├── AgentTimeout            the agent ran past its time limit
    │   └── AgentLost               its process died unrecorded (sandbox restarted, killed)
    ├── VerifierError
    │   ├── RewardFileMissing       the verifier wrote no reward file
    │   └── RewardParseError        the reward file is not a number
    └── ServiceError                the benchmark service is down or busy (transient)
        ├── ServiceProtocolError    it answered with a body durabench cannot read
        └── ServiceRejected         it refused the request (4xx): its message says why
            ├── ServiceAuthError    401/403: a key is missing, wrong, or not allowed
            ├── ServiceUnsupported  501: the service does not implement the endpoint
            └── UploadUrlRefused    the service handed out an upload URL the worker won't use

Temporal matches a failure's type name exactly, not its subclasses, so retryability is
declared once, as the tuple of leaf classes :data:`NON_RETRYABLE`.
"""

from __future__ import annotations

__all__ = [
    "NON_RETRYABLE",
    "AccountError",
    "AgentError",
    "AgentLost",
    "AgentTimeout",
    "ConfigError",
    "DockerUnavailable",
    "FileTooLarge",
    "DurabenchError",
    "ImageBuildError",
    "RewardFileMissing",
    "ResultStoreError",
    "RewardParseError",
    "SandboxError",
    "SandboxGone",
    "SandboxRefused",
    "ServiceAuthError",
    "ServiceError",
    "ServiceProtocolError",
    "ServiceRejected",
    "ServiceUnsupported",
    "UploadUrlRefused",
    "TaskFormatError",
    "UnknownAgent",
    "UnknownBackend",
    "UnknownConfig",
    "UnknownSuite",
    "VerifierError",
    "non_retryable_names",
]


class DurabenchError(Exception):
    """Base of every error durabench raises on purpose."""


class ConfigError(DurabenchError):
    """A setting, name or file the user gave is wrong."""


class AccountError(ConfigError):
    """The accounts file is wrong, or an account's secret is not where it says."""


class UnknownSuite(ConfigError):
    """A suite name that no registry knows."""


class UnknownConfig(ConfigError):
    """A lane config name that the config registry does not define."""


class UnknownAgent(ConfigError):
    """An agent name with no adapter."""


class UnknownBackend(ConfigError):
    """A sandbox backend name that no backend registered."""


class TaskFormatError(DurabenchError):
    """A task directory that does not follow the Harbor task format."""


class ResultStoreError(DurabenchError):
    """The object store of ``DURABENCH_RESULTS_URL`` refused or could not be reached.

    Retried: a store that was there at worker start is most likely back soon; the message
    says what to check if it is not.
    """


class SandboxError(DurabenchError):
    """The sandbox backend failed; transient unless a more specific leaf says otherwise."""


class FileTooLarge(SandboxError):
    """A file in the sandbox is larger than the worker reads (the agent may have made it)."""


class DockerUnavailable(SandboxError):
    """No Docker daemon answers."""


class SandboxRefused(SandboxError):
    """The sandbox service refused a request deterministically: asking again gets the same.

    An endpoint it lacks, a request it will not take: not retried; the message names
    what was refused and what to do.
    """


class SandboxGone(SandboxError):
    """The attempt's sandbox is gone or stopped: nothing runs in it again.

    Removed, deleted by its service, or its main process ended. Not retried: the steps
    that read a session retry until a deadline, and a sandbox that is gone will not come
    back in that time; the attempt starts over, on the record.
    """


class ImageBuildError(SandboxError):
    """A task image failed to build; the build log is kept beside the attempt."""


class AgentError(DurabenchError):
    """The agent could not be run."""


class AgentTimeout(AgentError):
    """The agent ran past its time limit."""


class AgentLost(AgentError):
    """The agent's process is gone without recording its end.

    Its sandbox restarted (a daemon restart, a reboot) or something outside it killed it.
    Waiting would be for ever; the attempt ends as infrastructure and the pair runs the
    lane again.
    """


class VerifierError(DurabenchError):
    """The verifier could not produce a reward."""


class RewardFileMissing(VerifierError):
    """The verifier ended without writing its reward file."""


class RewardParseError(VerifierError):
    """The reward file holds something that is not a number."""


class ServiceError(DurabenchError):
    """The benchmark service could not be reached or stayed busy; a later retry may pass.

    ``retry_after_s`` is the wait the service asked for, when it named one; ``status`` the
    HTTP status it answered with, when it answered.
    """

    def __init__(
        self, message: str, *, retry_after_s: float | None = None, status: int | None = None
    ) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s
        self.status = status


class ServiceProtocolError(ServiceError):
    """The service answered with a body that does not match the protocol."""


class ServiceRejected(ServiceError):
    """The service refused the request (a 4xx): the message carries the service's reason."""


class ServiceAuthError(ServiceRejected):
    """The service refused the credentials (401/403); the message names the key to set."""


class UploadUrlRefused(ServiceRejected):
    """The presigned upload URL the service gave points where the worker will not PUT.

    It fails that grading only (graded ``error``), as a store's refusal does; see
    :mod:`durabench.settings.urls`.
    """


class ServiceUnsupported(ServiceRejected):
    """The service does not implement the endpoint (501)."""


NON_RETRYABLE: tuple[type[DurabenchError], ...] = (
    ConfigError,
    AccountError,
    UnknownSuite,
    UnknownConfig,
    UnknownAgent,
    UnknownBackend,
    TaskFormatError,
    ImageBuildError,
    SandboxGone,
    SandboxRefused,
    AgentTimeout,
    AgentLost,
    RewardFileMissing,
    RewardParseError,
    ServiceProtocolError,
    ServiceRejected,
    ServiceAuthError,
    ServiceUnsupported,
)
"""Leaf classes that a retry cannot fix: fed to every Temporal ``RetryPolicy``."""


def non_retryable_names() -> list[str]:
    """Return the type names Temporal should not retry, for ``RetryPolicy``."""
    return [cls.__name__ for cls in NON_RETRYABLE]
