"""Where the service client may send: the URL checks, and a presigned URL aimed elsewhere.

No test sends a packet off loopback: the client runs on a transport that fails the test
before it would connect anywhere but 127.0.0.1.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest

from durabench.errors import ConfigError, ServiceRejected, UploadUrlRefused
from durabench.service import Generation, ServiceAuth, ServiceClient, ServiceRetry, grade
from durabench.service import ServiceTarget as Target
from durabench.settings.urls import check_service_url, check_upload_url
from tests.service_server import ARTIFACT_SCHEMA, ServiceServer

KEY = "vals-test-key-3f9a1c"
SIG = "X-Amz-Signature=s3cr3t-sig"
"""A presigned URL's signature: a credential, never quoted in a message."""


class LoopbackOnly(httpx.AsyncBaseTransport):
    """Sends to 127.0.0.1 only; any other host fails the test before a connection is made."""

    def __init__(self) -> None:
        self._inner = httpx.AsyncHTTPTransport()
        self.hosts: list[str] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Record the host; forward loopback requests, refuse the rest before sending."""
        self.hosts.append(request.url.host)
        if request.url.host != "127.0.0.1":
            raise AssertionError(f"the client tried to send {request.method} to {request.url}")
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        """Close the real transport."""
        await self._inner.aclose()


async def _no_sleep(seconds: float) -> None:
    pass


@pytest.fixture
def service() -> Iterator[ServiceServer]:
    with ServiceServer({"t1": "42"}) as server:
        yield server


# --- the service URL --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "https://grader.example.com",
        "https://10.0.0.5:8000",  # the user chose it: a private grader over TLS is fine
        "http://127.0.0.1:8000",
        "http://127.5.0.1:8000/api",
        "http://[::1]:8000",
        "http://localhost:8000",
        "HTTP://LOCALHOST.:8000",
        "http://grader.localhost:8000",
    ],
)
def test_service_url_allowed(url: str) -> None:
    check_service_url(url)


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://grader:8000", "use https://grader:8000"),
        ("http://10.0.0.5:8000/api?token=s3cr3t", "use https://10.0.0.5:8000/api"),
        ("http://0.0.0.0:8000", "not loopback"),
        ("http://[fe80::1]:8000", "in clear text"),
        ("http://localhost.example.com", "not loopback"),
        ("ftp://grader", "not an http(s) URL"),
        ("grader:8000", "not an http(s) URL"),
        ("https://", "not an http(s) URL"),
        ("https://[::1", "not an http(s) URL"),
        ("https://grader:port", "not an http(s) URL"),
    ],
)
def test_service_url_refused(url: str, reason: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(reason)) as err:
        check_service_url(url)
    assert "s3cr3t" not in str(err.value)


def test_the_client_refuses_plain_http_off_loopback() -> None:
    with pytest.raises(ConfigError, match="use https://grader:8000"):
        ServiceClient("http://grader:8000", ServiceAuth("descope", KEY))


# --- the presigned URL ------------------------------------------------------------------------

REMOTE = "https://grader.example.com"
LOCAL = "http://127.0.0.1:8000"


@pytest.mark.parametrize(
    ("url", "service_url"),
    [
        (f"https://bucket.s3.amazonaws.com/tenant/k?{SIG}", REMOTE),
        (f"https://8.8.8.8/k?{SIG}", REMOTE),
        (f"https://[2606:4700::1111]/k?{SIG}", REMOTE),
        (f"https://bucket.s3.amazonaws.com/tenant/k?{SIG}", LOCAL),
        (f"http://127.0.0.1:9000/uploads/k?{SIG}", LOCAL),  # the loopback test service
        (f"https://[::1]:9000/uploads/k?{SIG}", "http://localhost:8000"),
        (f"http://localhost:9000/uploads/k?{SIG}", "http://[::1]:8000"),
    ],
)
def test_upload_url_allowed(url: str, service_url: str) -> None:
    check_upload_url(url, service_url=service_url)


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://bucket.s3.amazonaws.com/k", "plain http"),
        ("https://169.254.169.254/latest/meta-data", "link-local"),
        ("http://169.254.169.254/latest/meta-data", "link-local"),
        ("https://[fe80::1]/k", "link-local"),
        ("https://[fe80::1%25eth0]/k", "link-local"),
        ("https://10.1.2.3/k", "private"),
        ("https://172.16.0.1/k", "private"),
        ("https://192.168.0.10/k", "private"),
        ("https://[fd00::1]/k", "private"),
        ("https://0.0.0.0/k", "unspecified"),
        ("https://[::]/k", "unspecified"),
        ("https://224.0.0.1/k", "multicast"),
        ("https://[ff02::1]/k", "multicast"),
        ("https://240.0.0.1/k", "reserved"),
        ("https://100.100.100.200/k", "non-public"),  # shared space: a cloud metadata address
        ("https://[::ffff:169.254.169.254]/k", "link-local"),
        ("https://2852039166/k", "link-local"),  # 169.254.169.254, as resolvers read it
        ("https://0xa9fea9fe/k", "link-local"),
        ("https://169.254.43518/k", "link-local"),
        ("https://127.0.0.1/k", "loopback"),  # the service is not on loopback
        ("http://localhost:8080/k", "loopback"),
        ("https://[::1]/k", "loopback"),
        ("https://admin.localhost/k", "loopback"),
        ("ftp://bucket.example.com/k", "not an http(s) URL"),
        ("https:///k", "not an http(s) URL"),
        ("https://[::1/k", "not an http(s) URL"),
        ("https://[fe80::zz]/k", "not an http(s) URL"),
    ],
)
def test_upload_url_refused(url: str, reason: str) -> None:
    with pytest.raises(UploadUrlRefused, match=re.escape(reason)) as err:
        check_upload_url(f"{url}?{SIG}#frag", service_url=REMOTE)
    message = str(err.value)
    assert isinstance(err.value, ServiceRejected)  # graded as an error, like a store's 403
    assert "s3cr3t" not in message and "Signature" not in message and "frag" not in message
    assert "the artifact was not sent" in message


def test_upload_url_with_credentials_does_not_quote_them() -> None:
    with pytest.raises(UploadUrlRefused) as err:
        check_upload_url("http://user:s3cr3t@bucket.example.com/k", service_url=REMOTE)
    assert "s3cr3t" not in str(err.value) and "bucket.example.com/k" in str(err.value)


# --- through the loopback service ------------------------------------------------------------


@pytest.mark.parametrize(
    ("upload_base", "reason"),
    [
        ("https://169.254.169.254", "link-local"),
        ("http://169.254.169.254", "link-local"),
        ("https://[fe80::1]", "link-local"),
        ("https://10.0.0.5", "private"),
        ("http://storage.example.com", "plain http"),
    ],
)
async def test_a_presigned_url_aimed_elsewhere_is_refused_before_sending(
    service: ServiceServer, upload_base: str, reason: str
) -> None:
    service.faults.upload_base = upload_base
    target = Target(
        url=service.url,
        api="v1",
        dataset="validation",
        payload_schema=ARTIFACT_SCHEMA,
        payload_type="artifact",
    )
    gen = Generation("r1", "t1", "baseline", 1, "completed", "", b"42\n", "submission.patch")
    guard = LoopbackOnly()
    retry = ServiceRetry(max_attempts=2, timeout_s=10)
    auth = ServiceAuth("descope", KEY)
    async with ServiceClient(
        service.url, auth, retry=retry, sleep=_no_sleep, transport=guard
    ) as client:
        graded = await grade(client, target, gen)
    [error] = graded.errors
    assert graded.status == "error" and reason in str(error)  # this grading only
    assert "sig=" not in str(error)  # the signature is not quoted
    assert set(guard.hosts) == {"127.0.0.1"}  # nothing left loopback
    assert service.paths() == ["/v1/submissions/upload-url"]  # no PUT, nothing graded
    assert service.artifacts == {}


def test_a_run_naming_a_plain_http_service_off_loopback_is_refused_at_plan_time() -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="clear text; use https://grader:8000"):
        Target(url="http://grader:8000")
    assert Target(url="http://127.0.0.1:8000").url == "http://127.0.0.1:8000"
