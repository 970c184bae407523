"""An async client for a Vals-style benchmark service, legacy and v1 endpoints.

Each method is one endpoint. Failures the service calls temporary (429, 408, 409, 5xx)
and lost connections are retried here with the waits :mod:`durabench.service.retry`
chooses; everything else becomes a :class:`~durabench.errors.ServiceError` at once.

A service is not trusted to behave: each request has a deadline for its whole answer
(``timeout_s``; httpx's own timeouts apply per read, so an answer dripped a byte at a time
would never meet them), and the answer is streamed and dropped past
``max_response_bytes``, so no answer can hold a worker or fill its memory.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Any, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel, ValidationError

from durabench.errors import ServiceError, ServiceProtocolError, ServiceUnsupported
from durabench.logs import get_logger
from durabench.models.benchmark_service import ServiceTarget
from durabench.numerals import read_int
from durabench.service.auth import ServiceAuth, service_auth_from_env
from durabench.service.errors import Call, error_for_response
from durabench.service.retry import ServiceRetry, backoff_s, parse_retry_after, retryable_status
from durabench.service.wire import (
    EvalResultData,
    EvaluateResponseRequest,
    FinalScoreRequest,
    FinalScoreResponse,
)
from durabench.service.wire_v1 import (
    V1DatasetTasks,
    V1EvalRequest,
    V1EvalResponse,
    V1ScoreRequest,
    V1ScoreResponse,
    V1Upload,
    V1UploadRequest,
)
from durabench.settings.urls import check_service_url, check_upload_url
from durabench.wording import counted

__all__ = ["MAX_RESPONSE_BYTES", "ServiceClient", "Sleep"]

MAX_RESPONSE_BYTES = 16 << 20
"""The largest answer read from a service: a grading or a score is a few KiB; a dataset's
task list is the largest, and 16 MiB holds tens of thousands of tasks."""

Sleep = Callable[[float], Awaitable[None]]
"""How the client waits between tries (tests pass one that records instead of sleeping)."""

_M = TypeVar("_M", bound=BaseModel)

log = get_logger("durabench.service")


def _body(request: BaseModel) -> dict[str, Any]:
    """The JSON body: top-level ``None`` fields left out, ``null`` tasks kept."""
    dumped = request.model_dump(mode="json", by_alias=True)
    return {key: value for key, value in dumped.items() if value is not None}


class ServiceClient:
    """One service, one set of credentials; use as ``async with ServiceClient(...) as c``."""

    def __init__(
        self,
        base_url: str,
        auth: ServiceAuth,
        *,
        retry: ServiceRetry | None = None,
        sleep: Sleep = asyncio.sleep,
        transport: httpx.AsyncBaseTransport | None = None,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
    ) -> None:
        """Build the client; no request is sent yet.

        Raises:
            ConfigError: ``base_url`` is not an http(s) URL, or is plain http off loopback
                (see :func:`~durabench.settings.urls.check_service_url`).
        """
        check_service_url(base_url)
        self.base_url = base_url.rstrip("/")
        self.retry = retry or ServiceRetry()
        self._auth = auth
        self._sleep = sleep
        self._cap = max_response_bytes
        self._http = httpx.AsyncClient(
            base_url=self.base_url, timeout=self.retry.timeout_s, transport=transport
        )

    @classmethod
    def for_target(
        cls,
        target: ServiceTarget,
        *,
        sleep: Sleep = asyncio.sleep,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> ServiceClient:
        """A client for a run's service, with the key read from this process's environment.

        Called where the request is about to be sent (an activity, ``starter score``), so
        the key never travels with the target.
        """
        auth = service_auth_from_env()
        return cls(target.url, auth, retry=target.retry, sleep=sleep, transport=transport)

    async def __aenter__(self) -> ServiceClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connections."""
        await self._http.aclose()

    async def evaluate_response(self, request: EvaluateResponseRequest) -> EvalResultData:
        """Grade one answer (legacy ``POST /evaluate-response/``).

        Raises:
            ServiceError: see :meth:`_call`.
        """
        return await self._call("POST", "/evaluate-response/", request, EvalResultData)

    async def final_score(self, request: FinalScoreRequest) -> FinalScoreResponse:
        """Score a run from its gradings (legacy ``POST /final-score/``).

        Raises:
            ServiceError: see :meth:`_call`.
        """
        return await self._call("POST", "/final-score/", request, FinalScoreResponse)

    async def evaluate(self, request: V1EvalRequest) -> V1EvalResponse:
        """Grade one payload (``POST /v1/evaluate``).

        Raises:
            ServiceError: see :meth:`_call`; a bearer-only key gets a ServiceAuthError.
        """
        return await self._call("POST", "/v1/evaluate", request, V1EvalResponse)

    async def score(self, request: V1ScoreRequest) -> V1ScoreResponse:
        """Score a run from its gradings (``POST /v1/score``).

        Raises:
            ServiceError: see :meth:`_call`.
        """
        return await self._call("POST", "/v1/score", request, V1ScoreResponse)

    async def upload_url(self, request: V1UploadRequest) -> V1Upload:
        """Where to put an artifact (``POST /v1/submissions/upload-url``).

        Raises:
            ServiceError: see :meth:`_call`.
        """
        return await self._call("POST", "/v1/submissions/upload-url", request, V1Upload)

    async def put_artifact(self, upload: V1Upload, data: bytes) -> None:
        """PUT ``data`` to the presigned URL, with no key.

        The URL carries its own grant, and the storage host behind it must never see the
        service key. The service chose the URL, so it is checked before anything is sent.

        Raises:
            UploadUrlRefused: the URL points where the worker does not upload (see
                :func:`~durabench.settings.urls.check_upload_url`); nothing was sent.
            ServiceRejected: the store refused it (413: too large for the dataset).
            ServiceError: the store stayed busy or unreachable through every try.
        """
        check_upload_url(upload.url, service_url=self.base_url)
        await self._send(Call("PUT", upload.url, v1=False, store=True), content=data, authed=False)

    async def dataset_tasks(self, dataset: str) -> V1DatasetTasks:
        """The tasks of a dataset the service hosts (``GET /v1/datasets/{name}/tasks``).

        Raises:
            ServiceUnsupported: the service does not list datasets (501).
            ServiceError: see :meth:`_call`.
        """
        path = f"/v1/datasets/{quote(dataset, safe='')}/tasks"
        try:
            return await self._call("GET", path, None, V1DatasetTasks)
        except ServiceUnsupported as exc:
            raise ServiceUnsupported(
                f"{exc}: this service does not list datasets, so --dataset-name cannot load "
                f"{dataset!r}; give the tasks in a file with --dataset-file"
            ) from None  # the message carries the service's answer; a cause would hide the hint

    async def _call(
        self, method: str, path: str, request: BaseModel | None, answer: type[_M]
    ) -> _M:
        """Send one request (retrying as the policy says) and read the answer as ``answer``.

        Raises:
            ServiceRejected: the service refused the request; ServiceAuthError for keys,
                ServiceUnsupported for a 501.
            ServiceProtocolError: the answer does not have the expected shape.
            ServiceError: the service stayed busy or unreachable through every try.
        """
        call = Call(method, f"{self.base_url}{path}", v1=path.startswith("/v1/"))
        response = await self._send(call, None if request is None else _body(request))
        try:
            return answer.model_validate_json(response.content)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "body"
            raise ServiceProtocolError(
                f"{call} answered with a body durabench cannot read ({where}: {first['msg']}); "
                "check that --service-url points at a benchmark service of this protocol"
            ) from None

    async def _send(
        self,
        call: Call,
        body: dict[str, Any] | None = None,
        *,
        content: bytes | None = None,
        authed: bool = True,
    ) -> httpx.Response:
        tries = 0
        headers = self._auth.headers() if authed else {}
        while True:
            tries += 1
            last = tries >= self.retry.max_attempts
            try:
                response = await self._request(call, body, content, headers)
            except httpx.TransportError as exc:  # timeouts, refused and reset connections
                if last:
                    raise ServiceError(
                        f"{call} failed {counted(tries, 'time')} "
                        f"({type(exc).__name__}: {exc}); check "
                        "that the service is up at that address; it is retried later"
                    ) from exc
                wait, why = backoff_s(self.retry, tries), type(exc).__name__
            else:
                if response.is_success:
                    return response
                wait_or_none = self._wait_after(response, tries)
                if wait_or_none is None or last:
                    raise error_for_response(
                        call, response, self._auth, retry_after_s=self._asked(response)
                    )
                wait, why = wait_or_none, str(response.status_code)
            log.debug("service retry", call=str(call), why=why, tries=tries, wait_s=wait)
            await self._sleep(wait)

    async def _request(
        self,
        call: Call,
        body: dict[str, Any] | None,
        content: bytes | None,
        headers: dict[str, str],
    ) -> httpx.Response:
        """One request, its whole answer within ``timeout_s`` and at most the size cap.

        Raises:
            httpx.TimeoutException: no complete answer within the deadline (retried).
            httpx.TransportError: the connection failed (retried).
            ServiceProtocolError: the answer is larger than the cap (not retried).
        """
        limit = self.retry.timeout_s
        try:
            async with asyncio.timeout(limit):
                async with self._http.stream(
                    call.method, call.url, json=body, content=content, headers=headers
                ) as streamed:
                    data = await self._capped(call, streamed)
        except TimeoutError:
            raise httpx.TimeoutException(
                f"no complete answer within {limit:g} s (the service's timeout_s)"
            ) from None
        return httpx.Response(
            streamed.status_code, headers=streamed.headers, content=data, request=streamed.request
        )

    async def _capped(self, call: Call, streamed: httpx.Response) -> bytes:
        """The body of ``streamed``, read piece by piece and refused past the cap."""
        declared = read_int(streamed.headers.get("Content-Length", ""))
        if declared is not None and declared > self._cap:
            raise self._too_large(call, f"it declares {counted(declared, 'byte')}")
        pieces: list[bytes] = []
        size = 0
        async for piece in streamed.aiter_bytes():
            size += len(piece)
            if size > self._cap:
                raise self._too_large(call, "it went on past that")
            pieces.append(piece)
        return b"".join(pieces)

    def _too_large(self, call: Call, how: str) -> ServiceProtocolError:
        return ServiceProtocolError(
            f"{call} answered with a body larger than {self._cap:,} bytes ({how}); a grading "
            "or a score is a few KiB: check that --service-url points at a benchmark service"
        )

    def _asked(self, response: httpx.Response) -> float | None:
        return parse_retry_after(response.headers.get("Retry-After"))

    def _wait_after(self, response: httpx.Response, tries: int) -> float | None:
        """How long to wait before trying again, or ``None`` to stop now."""
        if not retryable_status(response.status_code):
            return None
        asked = self._asked(response)
        if asked is not None:
            return asked if asked <= self.retry.retry_after_max_s else None
        if response.status_code == 409:
            return self.retry.conflict_wait_s
        return backoff_s(self.retry, tries)
