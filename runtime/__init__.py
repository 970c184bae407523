"""The Temporal runtime the CLI, workers and benchmarks share.

Connecting (the temporal CLI's profile, or the embedded dev server), assembling and
running a worker, taking over what a dead worker of this host left, sweeping orphaned
containers. It sits below ``starter`` (the CLI) and above ``workflows`` and
``activities``: the CLI imports it, never the other way round.
"""
