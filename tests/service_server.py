"""A small Vals-style benchmark service on loopback, for tests: the protocol and its faults.

It grades text answers by exact match against ``answers`` and scores a run as the mean pass
fraction over every task it is sent (``null`` tasks count as zero). Artifacts are uploaded
the v1 way: ``upload-url`` hands out a presigned URL on this same server, the client PUTs
the file there, and ``/v1/evaluate`` grades the uploaded file's text by its key. ``faults`` makes it
misbehave the way real services do (quota, restarts, grading in flight, refusals) a set
number of times; ``received`` records every request, headers and body, for assertions.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import quote, unquote

__all__ = ["Faults", "Received", "ServiceServer"]

SCHEMA = "test.text.v1"
"""The v1 payload schema of text answers."""
ARTIFACT_SCHEMA = "test.artifact.v1"
"""The v1 payload schema of uploaded artifacts."""


@dataclass
class Received:
    """One request as the service saw it."""

    method: str
    path: str
    headers: dict[str, str]
    """Header names lower-cased."""
    body: Any


@dataclass
class Faults:
    """What goes wrong, and how many times (each counter counts down per request)."""

    rate_limited: int = 0
    retry_after: str | None = "0"
    """``Retry-After`` sent with a 429 (``None``: no header)."""
    server_errors: int = 0
    conflicts: int = 0
    hang_ups: int = 0
    """Requests answered by closing the connection without a response."""
    garbage: int = 0
    """Requests answered 200 with a body outside the protocol."""
    reject: int | None = None
    """Answer every POST with this status (and ``reject_detail``)."""
    reject_detail: str = "bad request"
    echo_auth: bool = False
    """Put the received credentials into refusal messages, as a careless service might."""
    require_auth: bool = False
    """401 when no key is sent."""
    datasets: dict[str, list[dict[str, Any]]] | None = None
    """Datasets the service lists; ``None``: listing is not implemented (501)."""
    max_artifact_bytes: int = 1_000_000
    """Larger uploads are refused with 413."""
    store_status: int | None = None
    """Answer every upload with this status, echoing the signature as S3 does."""
    upload_base: str | None = None
    """Hand out presigned URLs on this base instead of this server's own (a careless or
    hostile service aiming the worker's PUT elsewhere); ``None``: this server."""
    no_percentage: set[str] = field(default_factory=set)
    """Tasks whose result carries no ``pass_percentage`` (the reference runner allows it)."""
    fraction: bool = False
    """Grade on a 0-1 scale instead of 0-100."""
    says_scale: bool = False
    """Name the scale in each result (``max_score``)."""
    drip_s: float | None = None
    """Send each answer one byte every this many seconds (a service that hangs a worker)."""
    flood_bytes: int = 0
    """Answer every request 200 with a body this large, sent in 64 KiB pieces, no length."""


@dataclass
class _State:
    answers: dict[str, str]
    base_url: str = ""
    sent_bytes: int = 0
    """Body bytes written before the client stopped reading (drips and floods)."""
    artifacts: dict[str, bytes] = field(default_factory=dict)
    faults: Faults = field(default_factory=Faults)
    received: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self, name: str) -> bool:
        """Use up one of fault ``name`` if any is left."""
        with self.lock:
            left: int = getattr(self.faults, name)
            if left <= 0:
                return False
            setattr(self.faults, name, left - 1)
            return True


class _Server(ThreadingHTTPServer):
    daemon_threads = False
    """Handler threads are joined on close, so no request outlives its test."""
    state: _State


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
        pass

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        self._serve(None)

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        length = int(self.headers.get("Content-Length") or 0)
        self._serve(json.loads(self.rfile.read(length) or b"null"))

    def do_PUT(self) -> None:  # noqa: N802 - stdlib name
        """The presigned upload: no key needed, the signature in the URL is the grant."""
        state = self.server.state
        data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        headers = {k.lower(): v for k, v in self.headers.items()}
        with state.lock:
            state.received.append(Received("PUT", self.path, headers, data))
        path, _, query = self.path.partition("?")
        key = unquote(path.removeprefix("/uploads/"))
        if state.faults.store_status is not None:
            self._send(state.faults.store_status, {"SignatureProvided": query})
        elif query != f"sig={_signature(key)}":
            self._send(403, {"detail": "bad signature"})
        elif len(data) > state.faults.max_artifact_bytes:
            self._send(413, {"detail": "artifact too large"})
        else:
            with state.lock:
                state.artifacts[key] = data
            self._send(200, {})

    def _trickle(self, data: bytes, piece: int, pause_s: float) -> None:
        """Write ``data`` in pieces until done or the client hangs up, counting what went."""
        state = self.server.state
        try:
            for start in range(0, len(data), piece):
                self.wfile.write(data[start : start + piece])
                self.wfile.flush()
                with state.lock:
                    state.sent_bytes += len(data[start : start + piece])
                if pause_s:
                    time.sleep(pause_s)
        except OSError:  # the client stopped reading: what a capped client should do
            pass
        self.close_connection = True

    def _abuse(self, status: int, body: Any) -> bool:
        """Answer as a hostile service does (drip or flood), if the faults say so."""
        faults = self.server.state.faults
        if faults.drip_s is None and not faults.flood_bytes:
            return False
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        if faults.flood_bytes:
            self._trickle(b" " * faults.flood_bytes, 64 << 10, 0.0)
        else:
            self._trickle(json.dumps(body).encode(), 1, faults.drip_s or 0.0)
        return True

    def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        if self._abuse(status, body):
            return
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _serve(self, body: Any) -> None:
        state = self.server.state
        headers = {k.lower(): v for k, v in self.headers.items()}
        with state.lock:
            state.received.append(Received(self.command, self.path, headers, body))
        refusal = self._refusal(state, headers)
        if refusal is not None:
            self._send(*refusal)
        elif state.take("hang_ups"):
            self.close_connection = True
        elif state.take("garbage"):
            self._send(200, {"unexpected": True})
        else:
            self._send(*_route(state, self.command, self.path, body))

    def _refusal(
        self, state: _State, headers: dict[str, str]
    ) -> tuple[int, Any, dict[str, str]] | None:
        faults = state.faults
        descope = headers.get("x-descope-api-key")
        bearer = headers.get("authorization")
        if faults.require_auth and not (descope or bearer):
            return 401, {"detail": "missing credentials"}, {}
        if self.path.startswith("/v1/") and bearer and not descope:
            return 403, {"detail": "v1 requires a Descope tenant key"}, {}
        if state.take("rate_limited"):
            after = {} if faults.retry_after is None else {"Retry-After": faults.retry_after}
            return 429, {"detail": "evaluation quota exceeded"}, after
        if state.take("server_errors"):
            return 503, {"detail": "grading sandbox unavailable"}, {}
        if state.take("conflicts"):
            return 409, {"detail": "grading already in flight for this task"}, {}
        if faults.reject is not None and self.command == "POST":
            echoed = f" (got {descope or bearer})" if faults.echo_auth else ""
            return faults.reject, {"detail": faults.reject_detail + echoed}, {}
        return None


def _grade(state: _State, task_id: str, answer: str) -> tuple[int, Any] | dict[str, Any]:
    """The result of grading ``answer``, or the refusal."""
    if task_id not in state.answers:
        return 404, {"detail": f"task {task_id!r} not found"}
    faults, full = state.faults, (1.0 if state.faults.fraction else 100.0)
    result: dict[str, Any] = {"max_score": full} if faults.says_scale else {}
    if task_id not in faults.no_percentage:
        result["pass_percentage"] = full if answer.strip() == state.answers[task_id] else 0.0
    return result


def _score(results: dict[str, Any], full: float) -> tuple[list[str], float]:
    passed = [
        ((r.get("result") or {}).get("pass_percentage") or 0.0) / full
        for r in results.values()
        if r is not None and r.get("status") == "evaluated"
    ]
    return list(results), (sum(passed) / len(results) if results else 0.0)


def _signature(key: str) -> str:
    return f"s{abs(hash(key)) % 10**8}"


def _evaluate_v1(state: _State, body: Any) -> tuple[int, Any]:
    payload = body["payload"]
    kind, schema = payload.get("type"), payload.get("schema")
    if (kind, schema) == ("artifact", ARTIFACT_SCHEMA):
        with state.lock:
            uploaded = state.artifacts.get(payload["data"])
        if uploaded is None:
            return 400, {"detail": f"no artifact uploaded under {payload['data']!r}"}
        answer = uploaded.decode(errors="replace")
    elif (kind, schema) == ("text", SCHEMA):
        answer = payload["data"]
    else:
        return 400, {"detail": f"wrong payload type or schema; expected text {SCHEMA}"}
    graded = _grade(state, body["task_id"], answer)
    if isinstance(graded, tuple):
        return graded
    result = graded
    reply = {"run_id": body["run_id"], "task_id": body["task_id"], "status": "evaluated"}
    return 200, reply | {"evaluator_version": "test-1.0", "result": result, "errors": []}


def _route(state: _State, method: str, path: str, body: Any) -> tuple[int, Any]:
    if (method, path) == ("POST", "/evaluate-response/"):
        graded = _grade(state, body["task_id"], body["response"])
        if isinstance(graded, tuple):
            return graded
        return 200, graded | {"eval_version": "test-1", "grader": "exact"}
    if (method, path) == ("POST", "/v1/evaluate"):
        return _evaluate_v1(state, body)
    if (method, path) == ("POST", "/v1/submissions/upload-url"):
        key = "/".join(
            (
                "tenant",
                body.get("dataset") or "-",
                body["run_id"],
                body["task_id"],
                body["filename"],
            )
        )
        base = state.faults.upload_base or state.base_url
        url = f"{base}/uploads/{quote(key, safe='')}?sig={_signature(key)}"
        return 200, {"key": key, "url": url, "expires_in": 900}
    if (method, path) in (("POST", "/final-score/"), ("POST", "/v1/score")):
        full = 1.0 if state.faults.fraction else 100.0
        tasks, score = _score(body["evaluation_results"], full)
        reply = {"tasks_evaluated": tasks, "final_score": score, "metadata": {"n": len(tasks)}}
        return 200, reply | ({"run_id": body["run_id"]} if path == "/v1/score" else {})
    parts = path.split("/")
    if method == "GET" and len(parts) == 5 and parts[1:3] == ["v1", "datasets"]:
        if state.faults.datasets is None:
            return 501, {"detail": "list_tasks not implemented"}
        name = unquote(parts[3])
        if name not in state.faults.datasets:
            return 404, {"detail": f"dataset {name!r} not found"}
        return 200, {
            "dataset": name,
            "dataset_version": "test",
            "tasks": state.faults.datasets[name],
        }
    return 404, {"detail": f"no route {method} {path}"}


class ServiceServer:
    """The service on 127.0.0.1 and an ephemeral port; use as a context manager."""

    def __init__(self, answers: dict[str, str]) -> None:
        self._state = _State(answers=dict(answers))
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.state = self._state
        self._state.base_url = self.url
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        """Base URL."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def faults(self) -> Faults:
        """What goes wrong; change it between calls."""
        return self._state.faults

    @property
    def received(self) -> list[Received]:
        """Every request so far."""
        with self._state.lock:
            return list(self._state.received)

    def set_answers(self, answers: dict[str, str]) -> None:
        """Grade by these answers from now on (a new grader version)."""
        with self._state.lock:
            self._state.answers = dict(answers)

    @property
    def sent_bytes(self) -> int:
        """Body bytes a drip or flood wrote before the client stopped reading."""
        with self._state.lock:
            return self._state.sent_bytes

    @property
    def artifacts(self) -> dict[str, bytes]:
        """Every uploaded artifact, by key."""
        with self._state.lock:
            return dict(self._state.artifacts)

    def paths(self) -> list[str]:
        """The path of every request so far, in order."""
        return [r.path for r in self.received]

    def __enter__(self) -> ServiceServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)
