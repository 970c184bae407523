"""Every endpoint the SDK calls, answered 404, 403 or 503, through the real SDK.

The family of "a missing endpoint retried as a missing sandbox": for each endpoint of
docs/daytona-endpoints.txt (but the SDK's optional event stream), what each answer
becomes, written by hand: 503 is retried and the operation succeeds; 403 is a refusal
(``SandboxRefused``, not retried); 404 is a refusal too, unless the call addresses a
sandbox, where it means the sandbox is gone (a removal is done; a lookup or a toolbox
call raises ``SandboxGone``).
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from durabench.errors import NON_RETRYABLE, SandboxGone, SandboxRefused
from durabench.sandbox import SandboxSpec
from durabench.settings.values import Settings
from tests.integration.daytona_fixtures import built_task_image, daytona_options_for

pytestmark = pytest.mark.docker
daytona = pytest.importorskip("durabench.sandbox.daytona")

OK = "ok"

# (endpoint as docs/daytona-endpoints.txt names it, status): what the operation does
EXPECTED: dict[tuple[str, int], object] = {
    ("GET /api/object-storage/push-access", 404): SandboxRefused,
    ("GET /api/object-storage/push-access", 403): SandboxRefused,
    ("GET /api/object-storage/push-access", 503): OK,
    ("POST /api/sandbox", 404): SandboxRefused,
    ("POST /api/sandbox", 403): SandboxRefused,
    ("POST /api/sandbox", 503): OK,
    ("GET /api/sandbox", 404): SandboxRefused,
    ("GET /api/sandbox", 403): SandboxRefused,
    ("GET /api/sandbox", 503): OK,
    ("GET /api/sandbox/{idOrName}", 404): SandboxGone,  # its lookup finds none
    ("GET /api/sandbox/{idOrName}", 403): SandboxRefused,
    ("GET /api/sandbox/{idOrName}", 503): OK,
    ("DELETE /api/sandbox/{idOrName}", 404): OK,  # gone already: removed is removed
    ("DELETE /api/sandbox/{idOrName}", 403): SandboxRefused,
    ("DELETE /api/sandbox/{idOrName}", 503): OK,
    ("POST /toolbox/{sandboxId}/process/execute", 404): SandboxGone,
    ("POST /toolbox/{sandboxId}/process/execute", 403): SandboxRefused,
    ("POST /toolbox/{sandboxId}/process/execute", 503): OK,
    ("POST /toolbox/{sandboxId}/files/bulk-upload", 404): SandboxGone,
    ("POST /toolbox/{sandboxId}/files/bulk-upload", 403): SandboxRefused,
    ("POST /toolbox/{sandboxId}/files/bulk-upload", 503): OK,
}


def test_every_recorded_endpoint_is_enumerated() -> None:
    recorded = Path(__file__).resolve().parents[2] / "docs" / "daytona-endpoints.txt"
    endpoints = {line for line in recorded.read_text().splitlines() if "socket.io" not in line}
    assert {e for e, _ in EXPECTED} == endpoints


async def _outcome(run: Callable[[], Awaitable[Any]]) -> object:
    try:
        await run()
    except NON_RETRYABLE as exc:
        return type(exc)
    return OK


@pytest.mark.parametrize(("endpoint", "status"), list(EXPECTED))
async def test_each_endpoint_and_answer(
    standin: Any,
    settings: Settings,
    tmp_path: Path,
    daytona_clients_closed: None,
    endpoint: str,
    status: int,
) -> None:
    opts = daytona_options_for(standin)
    method, route = endpoint.split(" ")
    image = built_task_image(settings, tmp_path) if "push-access" in route else settings.base_image
    spec = SandboxSpec(
        name=f"durabench-ep-{uuid.uuid4().hex[:8]}",
        image=image,
        labels={"durabench.deployment": f"ep-{uuid.uuid4().hex[:6]}"},
    )
    box = daytona.DaytonaSandbox(spec, opts)
    try:
        if "push-access" in route or (route == "/api/sandbox" and method == "POST"):
            standin.fail(method, route, [status])
            got = await _outcome(box.start)
        elif route == "/api/sandbox":
            await box.start()
            standin.fail(method, route, [status])
            deployment = spec.labels["durabench.deployment"]
            got = await _outcome(lambda: daytona.listed_sandboxes(opts, deployment))
        else:
            sandbox_id = await box.start()
            path = route.replace("{idOrName}", spec.name).replace("{sandboxId}", sandbox_id)
            if method == "DELETE":
                path = "/api/sandbox/"  # by id or name, as the SDK chooses
            standin.fail(method, path, [status])
            fresh = daytona.DaytonaSandbox(spec, opts)  # no handle kept: it looks up by name
            if method == "GET":
                got = await _outcome(lambda: fresh.exec(["true"]))
            elif method == "DELETE":
                got = await _outcome(box.stop)
            elif route.endswith("execute"):
                got = await _outcome(lambda: box.exec(["true"]))
            else:
                got = await _outcome(lambda: box.write_file("/tmp/x", "x"))
    finally:
        standin._faults.clear()
        await daytona.DaytonaSandbox(spec, opts).stop()
    assert got == EXPECTED[(endpoint, status)], (endpoint, status, got)
