"""A run's results once attempts are done: the files, the numbers, the reports, the dashboard.

Everything here reads or writes a run's results directory; nothing here runs an agent.
"""
