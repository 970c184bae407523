"""The viewer's routes and its HTTP server (the standard library's, on loopback).

Its addresses follow the results directory's layout, so the relative links of a run's
``report.html`` work inside the viewer too::

    /                                           every run
    /runs/<run>/                                plan, scores, attempts
    /runs/<run>/report.html                     the run's report
    /runs/<run>/tasks/<task>/                   the pair: each lane's attempts
    /runs/<run>/tasks/<task>/<lane>/attempt-<n>/          the attempt (?from=N: later steps)
    /runs/<run>/tasks/<task>/<lane>/attempt-<n>/files/    every file it kept
    /runs/<run>/tasks/<task>/<lane>/attempt-<n>/<file>    one file, as plain text
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import NamedTuple
from urllib.parse import parse_qs, quote, unquote, urlsplit

from durabench.errors import DurabenchError
from durabench.numerals import read_int
from durabench.results.html_policy import CONTENT_SECURITY_POLICY
from durabench.results.viewer.attempt import attempt_page
from durabench.results.viewer.page import esc, href, page
from durabench.results.viewer.runs import index_page, pair_page, run_page
from durabench.settings.paths import RunPaths, attempt_number
from durabench.wording import counted

__all__ = ["LOOPBACK_NAMES", "Answer", "ViewerSite", "loopback_host", "serve"]

_log = logging.getLogger(__name__)

HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
"""Every answer's headers: no script runs, nothing is fetched, no type is guessed."""
_HTML = "text/html; charset=utf-8"


class Answer(NamedTuple):
    """An HTTP answer: status, content type and body."""

    status: int
    content_type: str
    body: bytes


def _html(text: str, status: int = 200) -> Answer:
    return Answer(status, _HTML, text.encode("utf-8"))


class ViewerSite:
    """The pages of the runs under ``runs_dir``.

    ``fetch`` brings a run's files into the local copy before its pages are read (the
    results store's ``pull``: an object store's files; nothing for the local directory).
    """

    def __init__(self, runs_dir: Path, fetch: Callable[[RunPaths], None] | None = None) -> None:
        self.runs_dir = runs_dir
        self.fetch = fetch

    def answer(self, target: str) -> Answer:
        """The answer to a GET of ``target`` (path and query)."""
        url = urlsplit(target)
        parts = [unquote(p) for p in url.path.split("/") if p]
        start = parse_qs(url.query).get("from", ["0"])[0]
        try:
            return self._route(parts, read_int(start) or 0)
        except DurabenchError as exc:  # no such run, task or attempt; an id that leaves home
            return _html(page("not found", [], [f"<p>{esc(exc)}</p>"]), 404)

    def _route(self, parts: list[str], start: int) -> Answer:
        if not parts:
            return _html(index_page(self.runs_dir))
        if parts[0] != "runs" or len(parts) < 2:
            return _html(page("not found", [], ['<p>See <a href="/">the runs</a>.</p>']), 404)
        paths = RunPaths.for_run(self.runs_dir, parts[1])
        if self.fetch is not None:
            self.fetch(paths)
        rest = parts[2:]
        if not rest:
            return _html(run_page(paths))
        if rest == ["report.html"] and paths.report_html.is_file():
            return Answer(200, _HTML, paths.report_html.read_bytes())
        if len(rest) == 2 and rest[0] == "tasks":
            return _html(pair_page(paths, rest[1]))
        number = attempt_number(rest[3]) if len(rest) >= 4 and rest[0] == "tasks" else None
        if number is not None:
            return self._attempt(paths, rest[1], rest[2], number, rest[4:], start)
        return _html(page("not found", [], ['<p>See <a href="/">the runs</a>.</p>']), 404)

    def _attempt(
        self, paths: RunPaths, task: str, lane: str, number: int, rest: list[str], start: int
    ) -> Answer:
        where = paths.attempt(task, lane, number)
        if not rest:
            return _html(attempt_page(paths, task, lane, number, start))
        file = where.joinpath(*rest)
        inside = file.resolve().is_relative_to(where.resolve())
        if inside and file.is_file():
            return Answer(200, "text/plain; charset=utf-8", file.read_bytes())
        if rest == ["files"] and where.is_dir():
            return _html(_listing(paths.root.name, task, lane, number, where))
        return _html(page("not found", [], [f"<p>{esc('/'.join(rest))} was not kept</p>"]), 404)


def _listing(run_id: str, task: str, lane: str, number: int, where: Path) -> str:
    base = href("runs", run_id, "tasks", task, lane, f"attempt-{number}")
    files = sorted(p for p in where.rglob("*") if p.is_file() and not p.is_symlink())
    rels = [p.relative_to(where) for p in files]
    items = "".join(
        f'<li><a href="{base}{"/".join(quote(part, safe="") for part in rel.parts)}">'
        f"{esc(rel)}</a> ({counted((where / rel).stat().st_size, 'byte')})</li>"
        for rel in rels
    )
    crumbs = [(href("runs", run_id), run_id), (base, f"{task} · {lane} · attempt {number}")]
    return page("files kept", crumbs, [f"<ul>{items}</ul>"])


LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "[::1]"})
"""The only names the viewer answers to (``Host``, any port)."""


def loopback_host(value: str | None) -> bool:
    """Whether a ``Host`` header names this machine's loopback: a name, an optional port.

    The viewer listens on 127.0.0.1, but a web page of another origin can point its own
    name at 127.0.0.1 (DNS rebinding) and read the runs as its own origin; its requests
    carry its name, which is not one of :data:`LOOPBACK_NAMES`.
    """
    if not value:
        return False
    name, port = value, ""
    if not value.endswith("]") and ":" in value:
        name, _, port = value.rpartition(":")
    if port:
        number = read_int(port)
        if number is None or number > 65535:
            return False
    return name.lower().removesuffix(".") in LOOPBACK_NAMES


_MISDIRECTED = Answer(
    421,
    "text/plain; charset=utf-8",
    b"This viewer answers only at http://127.0.0.1 or http://localhost (its port).\n",
)


def serve(site: ViewerSite, host: str = "127.0.0.1", port: int = 0) -> ThreadingHTTPServer:
    """A server of ``site`` bound to ``host:port`` (0: a free port); call ``serve_forever``.

    A request whose ``Host`` is not a loopback name (:func:`loopback_host`) is answered 421
    and reads nothing.
    """

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the standard library's name
            named = self.headers.get("Host")
            answer = site.answer(self.path) if loopback_host(named) else _MISDIRECTED
            self.send_response(answer.status)
            self.send_header("Content-Type", answer.content_type)
            self.send_header("Content-Length", str(len(answer.body)))
            for name, value in HEADERS.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(answer.body)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            _log.debug("viewer: " + format, *args)

    return ThreadingHTTPServer((host, port), Handler)
