"""The viewer on a host that did not run the run: its files come from the object store."""

from __future__ import annotations

from pathlib import Path

from durabench.results.store import push
from durabench.settings.values import Settings
from starter.view import viewer_site
from tests.s3_server import s3_endpoint_fixture, s3_url_fixture  # noqa: F401 (fixtures)
from tests.unit.viewer_run import write_run


def test_the_viewer_reads_a_run_another_host_wrote_to_the_store(tmp_path: Path, url: str) -> None:
    writer = Settings(home=tmp_path / "a", results_url=url)
    push(writer, write_run(writer.runs_dir))
    reader = Settings(home=tmp_path / "b", results_url=url)
    site = viewer_site(reader)
    assert 'href="/runs/hand/"' in site.answer("/").body.decode()  # the index, fetched
    attempt = site.answer("/runs/hand/tasks/t1/baseline/attempt-1/")
    assert attempt.status == 200 and b"step 2 \xc2\xb7 agent" in attempt.body  # the trajectory
