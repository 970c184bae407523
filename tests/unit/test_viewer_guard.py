"""The viewer answers only loopback names, reads any query, and lists a run where it lies.

Issue 47 defect 14: a ``?from=`` of 5,000 digits dropped the connection; the viewer
answered any ``Host`` (a page of another origin could rebind its name to 127.0.0.1 and
read every run: DNS rebinding); a run directory whose plan.json names another run was
listed under that other id. The family check asks the running server with every kind of
Host header, and every route with an absurd ``from``.
"""

from __future__ import annotations

import http.client
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from durabench.results.viewer import ViewerSite
from durabench.results.viewer.site import serve
from durabench.settings.paths import RunPaths
from tests.unit.viewer_run import write_run

ROUTES = [
    "/",
    "/runs/hand/",
    "/runs/hand/report.html",
    "/runs/hand/tasks/t1/",
    "/runs/hand/tasks/t1/baseline/attempt-1/",
    "/runs/hand/tasks/t1/baseline/attempt-1/files/",
]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[int]:
    """A viewer of the hand run on a free loopback port; its port."""
    write_run(tmp_path / "runs")
    httpd = serve(ViewerSite(tmp_path / "runs"))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


def _get(port: int, target: str, host: str | None) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.putrequest("GET", target, skip_host=True)
        if host is not None:
            conn.putheader("Host", host)
        conn.endheaders()
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "[::1]", "LOCALHOST", "localhost."])
@pytest.mark.parametrize("with_port", [True, False])
def test_a_loopback_name_is_answered(server: int, host: str, with_port: bool) -> None:
    status, body = _get(server, "/runs/hand/", f"{host}:{server}" if with_port else host)
    assert status == 200 and b"hand" in body


@pytest.mark.parametrize(
    "host",
    [
        "evil.example",
        "evil.example:80",
        "localhost.evil.example",
        "127.0.0.1.nip.io",
        "127.0.0.2",
        "0.0.0.0",
        "",
        "localhost:notaport",
        "user@localhost",
        None,
    ],
)
def test_any_other_host_is_refused_and_reads_nothing(server: int, host: str | None) -> None:
    for target in ROUTES:
        status, body = _get(server, target, host)
        assert status == 421, (target, status)
        assert b"hand" not in body and b"t1" not in body


@pytest.mark.parametrize("start", ["9" * 5000, "-1", "1e9", "%D9%A3", "99999999999999999", "", "x"])
@pytest.mark.parametrize("route", ROUTES)
def test_an_absurd_from_still_gets_a_page(server: int, route: str, start: str) -> None:
    status, _ = _get(server, f"{route}?from={start}", f"127.0.0.1:{server}")
    assert status == 200


def test_a_run_is_listed_under_its_own_directory_not_what_its_plan_names(tmp_path: Path) -> None:
    paths = write_run(tmp_path / "runs")
    copy = RunPaths.for_run(tmp_path / "runs", "copy")
    copy.root.mkdir()
    copy.plan.write_text(paths.plan.read_text())  # still names run "hand"
    index = ViewerSite(tmp_path / "runs").answer("/").body.decode()
    assert '<a href="/runs/copy/">copy</a>' in index
    assert '<a href="/runs/copy/">hand</a>' not in index
    assert "plan.json names run hand" in index
    assert '<a href="/runs/hand/">hand</a>' in index
