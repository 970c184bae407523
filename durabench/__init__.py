"""durabench's domain: tasks, configs, agents, sandboxes, results. No Temporal in here."""

__version__ = "0.1.0"
