"""A local stand-in for the part of Daytona's API the official SDK calls.

Request and response bodies are the ``daytona-api-client`` and
``daytona-toolbox-api-client`` packages' own pydantic models (the SDK deserialises
with the async twins of the same generated code), so the stand-in cannot drift from
what the SDK sends and reads. Each "sandbox" is a local Docker container: no network
(``network_block_all``), or an internal network the test made (an allow-list), so an
attempt's whole lifecycle runs against it. It listens on loopback, in a thread of its
own, and records every request (:attr:`DaytonaStandIn.traffic`); tests make it answer
429/5xx (:meth:`DaytonaStandIn.fail`) or delete a sandbox under an attempt.

Images are built as Daytona builds them (:mod:`tests.daytona_standin_builds`).
"""

from __future__ import annotations

import asyncio
import io
import json
import tarfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import docker
import docker.errors
from aiohttp import web
from daytona_api_client.models.create_sandbox import CreateSandbox
from daytona_api_client.models.list_sandboxes_response import ListSandboxesResponse
from daytona_api_client.models.sandbox import Sandbox as SandboxDto
from daytona_api_client.models.sandbox_list_item import SandboxListItem
from daytona_api_client.models.sandbox_state import SandboxState
from daytona_api_client.models.toolbox_proxy_url import ToolboxProxyUrl
from daytona_toolbox_api_client.models.execute_request import ExecuteRequest
from daytona_toolbox_api_client.models.execute_response import ExecuteResponse

from tests.daytona_standin_builds import BUCKET, STANDIN_LABEL, ImageBuilds

__all__ = ["API_KEY", "BUCKET", "STANDIN_LABEL", "DaytonaStandIn", "ImageBuilds"]

API_KEY = "standin-key"


@dataclass
class _Box:
    dto: SandboxDto
    container: str


@dataclass
class _Fault:
    method: str
    prefix: str
    statuses: list[int]
    after: bool = False
    """Answer the error after doing the work (a response lost on the way)."""


@dataclass
class DaytonaStandIn:
    """The stand-in's state; :meth:`start` serves it on a loopback port."""

    label: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    network: str | None = None
    """The internal Docker network an allow-listed sandbox joins (``None``: none)."""
    traffic: list[tuple[str, str]] = field(default_factory=list)
    creates: int = 0
    """Sandboxes made (containers run): a retry must never make a second one."""
    url: str = ""
    images: ImageBuilds = field(default_factory=ImageBuilds)
    """Where build contexts go, and the images built from them."""
    create_requests: list[CreateSandbox] = field(default_factory=list)
    """Every create's body, as the SDK sent it."""
    most_at_once: int = 0
    """The most sandboxes that existed at once: what a quota must bound."""
    _boxes: dict[str, _Box] = field(default_factory=dict)
    _faults: list[_Fault] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def builds(self) -> int:
        """Images built: the same Dockerfile and contexts must build once."""
        return self.images.builds

    # -- control from tests -------------------------------------------------------------
    def fail(self, method: str, prefix: str, statuses: list[int], after: bool = False) -> None:
        """Answer the next requests ``method`` ``prefix...`` with ``statuses``, one each."""
        self._faults.append(_Fault(method, prefix, list(statuses), after))

    def delete_under(self, name: str) -> None:
        """Delete a sandbox as the service would (its auto-delete, an operator)."""
        box = self._lookup(name)
        if box is not None:
            self._remove(box)

    def boxes(self) -> dict[str, str]:
        """Sandbox name to container name, of the sandboxes that exist now."""
        with self._lock:
            return {b.dto.name: b.container for b in self._boxes.values()}

    def reset_most_at_once(self) -> None:
        """Count :attr:`most_at_once` from the sandboxes that exist now (a test's start)."""
        with self._lock:
            self.most_at_once = len(self._boxes)

    def containers(self) -> list[str]:
        """Names of the containers the stand-in runs now."""
        return [b.container for b in self._boxes.values()]

    # -- server --------------------------------------------------------------------------
    def start(self) -> None:
        """Serve on 127.0.0.1 (a free port) in a thread; :attr:`url` is the API's URL."""
        self._docker = docker.from_env()
        ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, args=(ready,), daemon=True)
        self._thread.start()
        ready.wait(30)

    def _serve(self, ready: threading.Event) -> None:
        self._loop = asyncio.new_event_loop()
        app = web.Application(middlewares=[self._middleware], client_max_size=1 << 30)
        app.add_routes(_routes(self))
        self._runner = web.AppRunner(app)
        self._loop.run_until_complete(self._runner.setup())
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        self._loop.run_until_complete(site.start())
        port = self._runner.addresses[0][1]
        self.url = f"http://127.0.0.1:{port}/api"
        ready.set()
        self._loop.run_forever()

    def stop(self) -> None:
        """Stop serving and remove every container the stand-in made."""
        for box in list(self._boxes.values()):
            self._remove(box)
        for c in self._docker.containers.list(
            all=True, filters={"label": f"{STANDIN_LABEL}={self.label}"}
        ):
            c.remove(force=True)
        fut = asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop)
        fut.result(30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(30)
        self._docker.close()

    @web.middleware
    async def _middleware(self, request: web.Request, handler: Any) -> web.StreamResponse:
        route = request.match_info.route.resource
        pattern = route.canonical if route is not None else request.path
        self.traffic.append((request.method, pattern))
        if request.headers.get("Authorization") != f"Bearer {API_KEY}":
            return _error(401, "bad key")
        for fault in self._faults:
            if (
                fault.statuses
                and request.method == fault.method
                and request.path.startswith(fault.prefix)
            ):
                status = fault.statuses.pop(0)
                if fault.after:
                    await handler(request)
                return _error(status, "stand-in fault")
        return await handler(request)

    # -- sandboxes -------------------------------------------------------------------------
    def _lookup(self, id_or_name: str) -> _Box | None:
        with self._lock:
            for box in self._boxes.values():
                if id_or_name in (box.dto.id, box.dto.name):
                    return box
        return None

    def _remove(self, box: _Box) -> None:
        try:
            self._docker.containers.get(box.container).remove(force=True)
        except docker.errors.NotFound:
            pass
        with self._lock:
            self._boxes.pop(box.dto.id, None)

    def _state(self, box: _Box) -> SandboxState:
        try:
            status = self._docker.containers.get(box.container).status
        except docker.errors.NotFound:
            return SandboxState.DESTROYED
        return SandboxState.STARTED if status == "running" else SandboxState.STOPPED

    def _network_for(self, req: CreateSandbox) -> str:
        """The test's internal network if the allow-list names its gateway address, else none.

        That address is where the test's model gateway listens: a sandbox reaches it only
        if the create allowed it, as Daytona's firewall would.
        """
        if self.network is None or req.network_block_all or not req.network_allow_list:
            return "none"
        ipam = (self._docker.networks.get(self.network).attrs or {}).get("IPAM") or {}
        hosts = {f"{c['Gateway']}/32" for c in ipam.get("Config") or [] if c.get("Gateway")}
        allowed = {cidr.strip() for cidr in req.network_allow_list.split(",")}
        return self.network if hosts & allowed else "none"

    def create(self, req: CreateSandbox) -> SandboxDto:
        """Build the image its Dockerfile names (cached by content) and run the container."""
        name = req.name or uuid.uuid4().hex
        if self._lookup(name) is not None:
            raise web.HTTPConflict(
                text=json.dumps({"message": f"sandbox {name} exists", "statusCode": 409}),
                content_type="application/json",
            )
        if req.build_info is None or not req.build_info.dockerfile_content:
            raise web.HTTPBadRequest(
                text=json.dumps({"message": "stand-in builds images only", "statusCode": 400}),
                content_type="application/json",
            )
        self.create_requests.append(req)
        image = self.images.image(self._docker, req.build_info, self.label)
        sid = uuid.uuid4().hex
        net = self._network_for(req)
        container = f"daytona-standin-{sid[:12]}"
        self._docker.containers.run(
            image,
            entrypoint=["sleep", "infinity"],
            command=[],
            name=container,
            detach=True,
            init=True,
            network_mode=net,
            labels={STANDIN_LABEL: self.label},
            mem_limit=f"{req.memory or 1}g",
            nano_cpus=int((req.cpu or 1) * 1e9),
            pids_limit=1024,
        )
        now = datetime.fromtimestamp(time.time(), tz=UTC).isoformat()
        dto = SandboxDto(
            id=sid,
            organization_id="org",
            name=name,
            user=req.user or "root",
            env=req.env or {},
            labels=req.labels or {},
            public=bool(req.public),
            network_block_all=bool(req.network_block_all),
            kvm=False,
            network_allow_list=req.network_allow_list,
            target=req.target or "local",
            cpu=int(req.cpu or 1),
            gpu=0,
            memory=int(req.memory or 1),
            disk=int(req.disk or 10),
            state=SandboxState.STARTED,
            auto_stop_interval=req.auto_stop_interval,
            auto_delete_interval=req.auto_delete_interval,
            created_at=now,
            updated_at=now,
            toolbox_proxy_url=self.url.removesuffix("/api") + "/toolbox",
        )
        with self._lock:
            self._boxes[sid] = _Box(dto, container)
            self.creates += 1
            self.most_at_once = max(self.most_at_once, len(self._boxes))
        return dto

    def dto(self, box: _Box) -> SandboxDto:
        """The sandbox as Daytona shows it now."""
        return box.dto.model_copy(update={"state": self._state(box)})

    def exec(self, box: _Box, req: ExecuteRequest) -> ExecuteResponse:
        """Run the command with ``sh -c`` as the sandbox's user; output combined."""
        c = self._docker.containers.get(box.container)
        done = c.exec_run(["sh", "-c", req.command], environment=req.envs or {}, workdir=req.cwd)
        return ExecuteResponse(
            exit_code=done.exit_code, result=done.output.decode("utf-8", "replace")
        )

    def upload(self, box: _Box, files: list[tuple[str, bytes]]) -> None:
        """Write files (parents must exist, as in a sandbox) as its user."""
        c = self._docker.containers.get(box.container)
        for dest, data in files:
            buf = io.BytesIO()
            with tarfile.open(fileobj=buf, mode="w") as tar:
                info = tarfile.TarInfo(dest.rsplit("/", 1)[-1])
                info.size, info.mode = len(data), 0o644
                tar.addfile(info, io.BytesIO(data))
            parent = dest.rsplit("/", 1)[0] or "/"
            if not c.put_archive(parent, buf.getvalue()):
                raise web.HTTPBadRequest(text=f"cannot write {dest}")


def _error(status: int, message: str) -> web.Response:
    return web.json_response(
        {"message": message, "statusCode": status, "error": "stand-in"}, status=status
    )


def _json(model: Any) -> web.Response:
    return web.Response(text=model.to_json(), content_type="application/json")


def _routes(s: DaytonaStandIn) -> list[web.RouteDef]:
    async def box_of(request: web.Request, key: str) -> _Box:
        box = s._lookup(request.match_info[key])
        if box is None or s._state(box) == SandboxState.DESTROYED:
            raise web.HTTPNotFound(
                text=json.dumps({"message": "sandbox not found", "statusCode": 404}),
                content_type="application/json",
            )
        return box

    async def create(request: web.Request) -> web.Response:
        req = CreateSandbox.from_dict(await request.json())
        assert req is not None
        return _json(await asyncio.to_thread(s.create, req))

    async def get(request: web.Request) -> web.Response:
        return _json(await asyncio.to_thread(s.dto, await box_of(request, "idOrName")))

    async def delete(request: web.Request) -> web.Response:
        box = await box_of(request, "idOrName")
        await asyncio.to_thread(s._remove, box)
        return _json(box.dto.model_copy(update={"state": SandboxState.DESTROYED}))

    async def start(request: web.Request) -> web.Response:
        box = await box_of(request, "idOrName")
        await asyncio.to_thread(lambda: s._docker.containers.get(box.container).start())
        return _json(await asyncio.to_thread(s.dto, box))

    async def stop(request: web.Request) -> web.Response:
        box = await box_of(request, "idOrName")
        await asyncio.to_thread(lambda: s._docker.containers.get(box.container).stop(timeout=1))
        return _json(await asyncio.to_thread(s.dto, box))

    async def listing(request: web.Request) -> web.Response:
        want = json.loads(request.query.get("labels") or "{}")
        items = []
        for box in list(s._boxes.values()):
            if all(box.dto.labels.get(k) == v for k, v in want.items()):
                d = await asyncio.to_thread(s.dto, box)
                items.append(SandboxListItem.from_dict(d.to_dict()))
        return _json(ListSandboxesResponse(items=items, next_cursor=None))

    async def proxy_url(request: web.Request) -> web.Response:
        await box_of(request, "sandboxId")
        return _json(ToolboxProxyUrl(url=s.url.removesuffix("/api") + "/toolbox"))

    async def execute(request: web.Request) -> web.Response:
        box = await box_of(request, "sandboxId")
        req = ExecuteRequest.from_dict(await request.json())
        assert req is not None
        return _json(await asyncio.to_thread(s.exec, box, req))

    async def upload(request: web.Request) -> web.Response:
        box = await box_of(request, "sandboxId")
        reader = await request.multipart()
        paths: dict[str, str] = {}
        datas: dict[str, bytes] = {}
        while (part := await reader.next()) is not None:
            name = part.name or ""  # files[i].path (text), files[i].file (the bytes)
            body = bytes(await part.read())  # type: ignore[union-attr]
            key, _, kind = name.rpartition(".")
            if kind == "path":
                paths[key] = body.decode()
            elif kind == "file":
                datas[key] = body
        files = [(paths[k], datas[k]) for k in datas]
        await asyncio.to_thread(s.upload, box, files)
        return web.json_response({})

    async def push_access(request: web.Request) -> web.Response:
        return _json(s.images.push_access())

    return [
        web.get("/api/object-storage/push-access", push_access),
        web.post("/api/sandbox", create),
        web.get("/api/sandbox", listing),
        web.get("/api/sandbox/{idOrName}", get),
        web.delete("/api/sandbox/{idOrName}", delete),
        web.post("/api/sandbox/{idOrName}/start", start),
        web.post("/api/sandbox/{idOrName}/stop", stop),
        web.get("/api/sandbox/{sandboxId}/toolbox-proxy-url", proxy_url),
        web.post("/toolbox/{sandboxId}/process/execute", execute),
        web.post("/toolbox/{sandboxId}/files/bulk-upload", upload),
    ]
