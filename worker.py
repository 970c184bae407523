"""``python worker.py``: a durabench worker for this machine (``python -m starter worker``).

The worker itself is assembled in :mod:`runtime.workers`; this is its entry point, with
the same ``--help`` and ``--version`` as the CLI verb.
"""

from starter.work import worker

if __name__ == "__main__":
    worker()
