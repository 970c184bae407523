"""A run before it runs: its plan, the rows a person approves, the approval check.

Nothing here starts a sandbox or spends money; it decides what a run will do.
"""
