"""A container registry's pull handshake on loopback, as the registry API (v2) answers it.

``HEAD /v2/<repository>/manifests/<reference>``: a repository's mode says how it answers
(see :data:`MODES`); one the registry does not hold is 404 once a token is shown. Tokens
come from ``GET /token`` (the realm its ``Bearer`` challenge names), anonymous, as Docker
Hub and ghcr.io issue them for public repositories. Every request is kept
(:attr:`RegistryStandIn.seen`) so a test can read what the worker sent.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

__all__ = ["MODES", "RegistryStandIn", "registry_serving"]

TOKEN = "anonymous-pull-token"
MODES = {
    "open": "served to anyone, no token asked",
    "public": "a Bearer challenge; served to an anonymous token",
    "private": "a Bearer challenge; an anonymous token is not enough (401)",
    "basic": "a Basic challenge: a login is the only way in",
    "token-refused": "a Bearer challenge whose realm refuses anonymous tokens",
    "token-garbage": "a Bearer challenge whose realm answers something that is not JSON",
    "token-busy": "a Bearer challenge whose realm answers 503",
    "busy": "429, retry later",
    "broken": "500",
}


class RegistryStandIn:
    """The registry's state: repository -> mode, and what it was sent."""

    def __init__(self, repositories: Mapping[str, str]) -> None:
        self.repositories = dict(repositories)
        self.seen: list[tuple[str, str, dict[str, str]]] = []
        self.url = ""

    def host(self) -> str:
        """``127.0.0.1:PORT``: what an image name starts with to live here."""
        return self.url.removeprefix("http://")


def _handler(registry: RegistryStandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            return

        def _answer(self, status: int, headers: Mapping[str, str] = {}, body: bytes = b"") -> None:
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _seen(self) -> None:
            registry.seen.append((self.command, self.path, dict(self.headers.items())))

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            self._seen()
            if not self.path.startswith("/token"):
                return self._answer(404)
            scope = parse_qs(urlsplit(self.path).query).get("scope", [""])[0]
            repository = scope.removeprefix("repository:").rsplit(":", 1)[0]
            mode = registry.repositories.get(repository, "absent")
            if mode == "token-refused":
                return self._answer(401, body=b'{"errors": [{"code": "UNAUTHORIZED"}]}')
            if mode == "token-busy":
                return self._answer(503, {"Retry-After": "5"})
            if mode == "token-garbage":
                return self._answer(200, {"Content-Type": "application/json"}, b"<html>")
            body = b'{"token": "%s"}' % TOKEN.encode()
            return self._answer(200, {"Content-Type": "application/json"}, body)

        def do_HEAD(self) -> None:  # noqa: N802 (http.server's name)
            self._seen()
            path = self.path.removeprefix("/v2/")
            repository, _, _reference = path.rpartition("/manifests/")
            mode = registry.repositories.get(repository, "absent")
            if mode == "open":
                return self._answer(200, {"Docker-Content-Digest": "sha256:" + "0" * 64})
            if mode == "busy":
                return self._answer(429, {"Retry-After": "30"})
            if mode == "broken":
                return self._answer(500)
            if mode == "basic":
                return self._answer(401, {"WWW-Authenticate": 'Basic realm="registry"'})
            if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                challenge = (
                    f'Bearer realm="{registry.url}/token",service="standin",'
                    f'scope="repository:{repository}:pull"'
                )
                return self._answer(401, {"WWW-Authenticate": challenge})
            if mode == "private":
                return self._answer(401)
            if mode == "absent":
                return self._answer(404)
            return self._answer(200, {"Docker-Content-Digest": "sha256:" + "0" * 64})

    return Handler


@contextmanager
def registry_serving(repositories: Mapping[str, str]) -> Iterator[RegistryStandIn]:
    """A registry on a loopback port holding ``repositories`` (name -> mode)."""
    registry = RegistryStandIn(repositories)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(registry))
    registry.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield registry
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
