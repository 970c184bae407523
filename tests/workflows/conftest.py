"""Workflow-test fixtures."""

from tests.workflows.harness import disk, env, skipping

__all__ = ["disk", "env", "skipping"]
