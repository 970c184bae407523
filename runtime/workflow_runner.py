"""The workflow sandbox every durabench worker runs its workflows in.

Temporal's sandbox re-imports, for each workflow instance, every module it does not pass
through. ``workflows/__init__`` imports all four workflow modules, so each new attempt,
pair or run re-executed all of them (and ``policies`` and ``search_attributes``): a
profile of a busy worker put 22% of its CPU there. ``workflows`` holds deterministic code
only, and no module-level state that a workflow writes (its module constants are
retry policies, timeouts and search attribute keys), so one import per worker is safe.
The sandbox still checks what workflow code calls; only the re-import is skipped.
"""

from __future__ import annotations

from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

__all__ = ["PASSED_THROUGH", "workflow_runner"]

PASSED_THROUGH = ("workflows", "durabench", "activities")
"""durabench's packages the sandbox imports once (with their submodules), not per workflow.

``workflows`` is orchestration only; ``durabench`` and ``activities`` are what the
workflows import inside ``imports_passed_through()`` (models, policies, activity classes
for their method references): none keeps module-level state a workflow writes.
"""


def workflow_runner() -> SandboxedWorkflowRunner:
    """The sandboxed runner with durabench's deterministic packages passed through."""
    restrictions = SandboxRestrictions.default.with_passthrough_modules(*PASSED_THROUGH)
    return SandboxedWorkflowRunner(restrictions=restrictions)
