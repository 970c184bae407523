"""The patches of ``SuiteRunWorkflow``, one line of history each: what changed, when.

Each name is a ``workflow.patched`` marker in the histories of runs that took the new
path; runs recorded before it replay the old one (tests/histories).
"""

from __future__ import annotations

__all__ = [
    "APPROVAL_TIMEOUT",
    "APPROVED_WITH_REQUEST",
    "BATCHED_STARTS",
    "CANCEL_ON_REQUEST",
    "CONTROL_AFTER_START",
    "PLAN_ATTRIBUTES",
    "STATUS_AT_END",
]

APPROVAL_TIMEOUT = "approval-timeout"
"""Patch: an unapproved run ends after ``approval_timeout_sec`` (before it, it waited forever)."""

BATCHED_STARTS = "batched-pair-starts"
"""Patch: free slots are filled in one workflow task (histories before it start one pair
per workflow task)."""


APPROVED_WITH_REQUEST = "approved-with-request"
"""Patch: a request's ``approved_by`` (``starter run --yes``) approves the plan once made
(before it, ``--yes`` was sent as an update by an attached starter only)."""

CONTROL_AFTER_START = "control-after-pair-start"
"""Patch: a pause or resume that came while a pair was being started is sent again once
it started (the first signal may have found no pair to reach)."""

CANCEL_ON_REQUEST = "cancel-pairs-on-any-cancel"
"""Patch: a cancel that reaches the run as an activity's or a child's error (it landed
while ``plan_page`` ran) cancels the pairs in flight too (before it, only a cancel that
arrived as ``asyncio.CancelledError`` did, and the others' pairs ran on)."""

STATUS_AT_END = "run-status-at-end"
"""Patch: a run that fails or is cancelled sets its status attribute to ``failed`` or
``cancelled`` (before it, the status stayed where the run was, such as ``planning``)."""

PLAN_ATTRIBUTES = "plan-search-attributes"
"""Patch: once planned, the run's suite, model, config mode and category attributes are
the plan's (before it, the request's: a rerun, asked for without them, had none)."""
