"""A local web viewer of runs: plans, scores, pairs, attempts and their trajectories.

``python -m starter view`` serves it on loopback from the runs directory (fetched from the
object store first when results live there). Pages are rendered on the server from the
results files; they carry no script.
"""

from __future__ import annotations

from durabench.results.viewer.site import Answer, ViewerSite, serve

__all__ = ["Answer", "ViewerSite", "serve"]
