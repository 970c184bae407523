"""Workflow-test fixtures."""

from tests.workflows.harness import disk, env

__all__ = ["disk", "env"]
