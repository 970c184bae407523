"""Which ``DURABENCH_RESULTS_URL`` a process accepts, checked when settings load.

Kept with the settings, not with the object store that uses the URL, so that reading
settings never imports the store (and fsspec) and the two do not import each other.
"""

from __future__ import annotations

from urllib.parse import urlsplit

__all__ = ["CREDENTIALS_HINT", "SCHEMES", "check_results_url"]

SCHEMES = ("s3",)
"""URL schemes of object stores durabench writes results to."""

CREDENTIALS_HINT = (
    "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE) on every worker and "
    "where you run the starter"
)


def check_results_url(url: str) -> str:
    """``url`` if it names a bucket of a known object store, else why not and what to give.

    Raises:
        ValueError: a scheme durabench does not write to, no bucket, or credentials in it.
    """
    parts = urlsplit(url)
    if parts.scheme not in SCHEMES:
        known = ", ".join(f"{s}://bucket/prefix" for s in SCHEMES)
        raise ValueError(
            f"{url!r} is not an object store URL durabench writes to ({known}); unset it to "
            "keep results in $DURABENCH_HOME/runs"
        )
    if "@" in parts.netloc or parts.password or parts.query:
        raise ValueError(
            f"{parts.scheme}:// URL carries credentials or options; give s3://bucket/prefix "
            f"and {CREDENTIALS_HINT} (AWS_ENDPOINT_URL for a store other than AWS)"
        )
    if not parts.netloc:
        raise ValueError(f"{url!r} names no bucket; give {parts.scheme}://bucket/prefix")
    return url
