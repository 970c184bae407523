"""Workflow-test fixtures."""

from tests.workflows.harness import env

__all__ = ["env"]
