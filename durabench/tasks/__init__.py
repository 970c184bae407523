"""Harbor-format tasks and the suite registry."""

from durabench.tasks.files import task_files
from durabench.tasks.loader import load_task
from durabench.tasks.suites import BUILTIN_SUITES_DIR, known_suites, load_suite, suite_dirs

__all__ = [
    "BUILTIN_SUITES_DIR",
    "known_suites",
    "load_suite",
    "load_task",
    "suite_dirs",
    "task_files",
]
