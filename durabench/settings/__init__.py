"""What a process is configured with: settings and their sources, paths, allowed URLs, secrets.

Read once per process, so the starter, the worker and the tests agree on them. Named
``settings`` rather than ``config`` because :mod:`durabench.configs` already holds the
lanes' agent configs.
"""
