"""The workflow sandbox every durabench worker runs its workflows in.

Temporal's sandbox imports, for each workflow instance, every module it does not pass
through, and the copies it imports see a restricted standard library: ``datetime.now()``,
``random.random()``, ``time.time()``, ``uuid.uuid4()``, ``os.getpid()`` and the like fail
the workflow task instead of making it non-deterministic. Importing ``workflows`` (all
four workflow modules and their helpers) anew for each attempt, pair and run took a
fifth of a busy worker's CPU. Passing the package through saved that, but a module
passed through is the host's own, bound to the unrestricted standard library: nothing
checked workflow code any more.

So the runner imports ``workflows`` once, itself, inside a sandbox importer: those
copies are bound to the restricted standard library, and their restrictions apply
whenever a workflow runs on the thread (workflow code runs nowhere else). Every
workflow instance's sandbox starts with them already imported. One import per worker,
and workflow code is checked as if it were imported per instance. ``workflows`` keeps no
module-level state a workflow writes (its constants are retry policies, timeouts and
search attribute keys), so sharing its copies between instances is safe. Its modules
import each other outside ``imports_passed_through``: a module imported inside one is
the host's, unchecked.

``durabench`` and ``activities`` are passed through: the workflows import their models,
policies and activity classes (for method references) inside ``imports_passed_through``,
and they hold no module-level state a workflow writes either.

The sandbox's internals used here (its importer, restriction context and instance) are
not public API; ``tests/workflows/test_workflow_runner.py`` fails if they change.
"""

from __future__ import annotations

import threading
import types
from dataclasses import dataclass, field
from typing import Any

from temporalio import workflow
from temporalio.worker import WorkflowInstance, WorkflowInstanceDetails
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions
from temporalio.worker.workflow_sandbox._importer import Importer
from temporalio.worker.workflow_sandbox._restrictions import RestrictionContext
from temporalio.worker.workflow_sandbox._runner import _Instance

__all__ = ["PASSED_THROUGH", "SHARED", "SharedImportRunner", "workflow_runner"]

PASSED_THROUGH = ("durabench", "activities")
"""durabench's packages the sandbox takes from the host (with their submodules)."""

SHARED = ("workflows",)
"""Packages imported once per runner inside the sandbox, shared by every instance (with
every module their ``__all__`` names come from: ``workflows`` loads its names lazily)."""

_SANDBOX_OWN = frozenset({"sys", "builtins", "__main__"})
"""Modules every sandbox importer makes for itself."""


class _WhileWorkflowsRun(RestrictionContext):
    """Restrictions of the shared copies: in force while any sandbox runs on the thread.

    A sandbox flags its thread while it runs workflow code (and while it imports a
    workflow's module, which finds the shared copies already imported).
    """

    @property
    def is_runtime(self) -> bool:
        return workflow.unsafe.in_sandbox()

    @is_runtime.setter
    def is_runtime(self, value: bool) -> None:
        """Ignored: whether workflow code runs is read from the thread."""


@dataclass(frozen=True)
class _Imported:
    """The shared copies, and the modules the importer has already restricted."""

    modules: dict[str, types.ModuleType]
    restricted: frozenset[str]


def _import_once(restrictions: SandboxRestrictions, names: tuple[str, ...]) -> _Imported:
    importer = Importer(restrictions, _WhileWorkflowsRun())
    with importer.applied():
        for name in names:
            module = __import__(name)
            for public in getattr(module, "__all__", ()):
                getattr(module, public)  # a package that loads its names lazily: now
    modules = {k: v for k, v in importer.new_modules.items() if k not in _SANDBOX_OWN}
    return _Imported(modules, frozenset(importer.modules_checked_for_restrictions))


class _SeededInstance(_Instance):
    """A sandboxed workflow instance whose sandbox starts with the shared copies."""

    def __init__(self, det: WorkflowInstanceDetails, runner: SharedImportRunner) -> None:
        self._seed = runner.imported()
        super().__init__(det, runner.runner_class, runner.restrictions)

    def _create_instance(self) -> None:
        self.importer.new_modules.update(self._seed.modules)
        self.importer.modules_checked_for_restrictions.update(self._seed.restricted)
        super()._create_instance()


@dataclass(frozen=True)
class SharedImportRunner(SandboxedWorkflowRunner):
    """The sandboxed runner, with ``shared`` imported once for all its instances."""

    shared: tuple[str, ...] = SHARED
    """Modules (with what they import) imported once, inside the sandbox's restrictions."""

    _imported: list[_Imported] = field(default_factory=list, init=False, compare=False)
    _lock: Any = field(default_factory=threading.Lock, init=False, compare=False)

    def imported(self) -> _Imported:
        """The shared copies, imported on first use (a worker's first workflow check)."""
        with self._lock:
            if not self._imported:
                self._imported.append(_import_once(self.restrictions, self.shared))
            return self._imported[0]

    def create_instance(self, det: WorkflowInstanceDetails) -> WorkflowInstance:
        """A sandboxed instance that finds ``shared`` already imported."""
        return _SeededInstance(det, self)


def workflow_runner(shared: tuple[str, ...] = SHARED) -> SharedImportRunner:
    """The runner of every durabench worker.

    ``shared`` is imported once and checked; durabench's other packages are passed through.
    """
    restrictions = SandboxRestrictions.default.with_passthrough_modules(*PASSED_THROUGH)
    return SharedImportRunner(restrictions=restrictions, shared=shared)
