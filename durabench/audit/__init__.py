"""The audit of a finished run: its files against themselves and against its history.

:func:`digest_attempt` is what ``record_attempt`` returns into Temporal history, and
:func:`manifest_of` the run's own files ``write_report`` returns there;
:func:`audit_run` is ``starter audit``'s core, given the history read back as a ledger.
"""

from durabench.audit.digest import digest_attempt, manifest_of, sha256_file
from durabench.audit.disk import AttemptKey, read_attempts
from durabench.audit.run import audit_run

__all__ = [
    "AttemptKey",
    "audit_run",
    "digest_attempt",
    "manifest_of",
    "read_attempts",
    "sha256_file",
]
