"""The one Content-Security-Policy of every HTML page durabench writes or serves.

A page holds what agents and tasks wrote (escaped); the policy is the second wall: no
script, frame, form, font or remote image loads or runs, and no ``<base>`` moves its
links. It goes into the page itself as a meta tag, so a report.html opened from disk, an
object store or a mail holds it too, and the viewer also sends it as a header.
"""

from __future__ import annotations

__all__ = ["CONTENT_SECURITY_POLICY", "CSP_META"]

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
    "form-action 'none'"
)
"""Nothing is fetched or run; inline styles and ``data:`` images only."""

CSP_META = f'<meta http-equiv="Content-Security-Policy" content="{CONTENT_SECURITY_POLICY}">'
"""The policy as the first tag of a page's ``<head>``."""
