"""An object-store key no file can be kept at is skipped and named; the run is still read.

Issue 47 defect 13: a key such as ``<run>/results.json/x`` (under an object), ``<run>/tasks``
(an object where the run has a directory) or a name of 300 bytes made every reader fail
with "cannot reach the object store ... Start it", so anyone who could write to the bucket
could stop every report; ``..`` was already skipped and named. The family check plants each
kind beside a real run and reads it through each reader (a run's pull, the index, and
``starter report``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from durabench.results.store import ObjectStore, pulled, push
from durabench.results.store.keys import unkeepable
from durabench.settings.paths import RunPaths
from durabench.settings.values import Settings
from tests.s3_server import s3_endpoint_fixture, s3_url_fixture  # noqa: F401 (fixtures)
from tests.unit.results_set import hand_result

RESULT = "tasks/t1/baseline/attempt-1/result.json"
PLANTED = {
    "under a file": "results.json/x",
    "a file where a directory is": "tasks",
    "under a file, deep": f"{RESULT}/more/x",
    "a name too long": "tasks/" + "n" * 300,
    "a task id too long": f"tasks/{'n' * 300}/baseline/attempt-1/result.json",
    "a lane where a file is": "tasks/t1/baseline",
}


def _made(tmp_path: Path, url: str) -> RunPaths:
    made = Settings(home=tmp_path / "a", results_url=url)
    paths = RunPaths.for_run(made.runs_dir, "hand")
    paths.root.mkdir(parents=True)
    paths.results.write_text(hand_result().model_dump_json())
    paths.plan.write_text(hand_result().plan.model_dump_json())
    (paths.root / RESULT).parent.mkdir(parents=True)
    (paths.root / RESULT).write_text(hand_result().attempts[0].model_dump_json())
    push(made, paths)
    return paths


def _plant(url: str, relative: str) -> str:
    store = ObjectStore(url)
    key = f"{store.root}/hand/{relative}"
    store.fs.pipe_file(key, b"planted")
    return key


@pytest.mark.parametrize("kind", sorted(PLANTED))
def test_a_pull_skips_and_names_the_key_and_reads_the_rest(
    tmp_path: Path, url: str, kind: str
) -> None:
    _made(tmp_path, url)
    key = _plant(url, PLANTED[kind])
    here = Settings(home=tmp_path / "b", results_url=url)
    store = ObjectStore(url)
    paths = RunPaths.for_run(here.runs_dir, "hand")
    store.pull(paths)
    assert paths.results.is_file() and (paths.root / RESULT).is_file()
    assert any(key in why and "skipped" in why for why in store.skipped), store.skipped
    assert pulled(here, "hand").results.is_file()


@pytest.mark.parametrize("kind", sorted(PLANTED))
def test_the_index_skips_and_names_the_key(tmp_path: Path, url: str, kind: str) -> None:
    _made(tmp_path, url)
    _plant(url, PLANTED[kind])
    here = tmp_path / "b" / "runs"
    ObjectStore(url).pull_index(here)
    assert (here / "hand" / "plan.json").is_file() and (here / "hand" / RESULT).is_file()


@pytest.mark.parametrize("kind", sorted(PLANTED))
def test_report_reads_the_run_and_names_the_key(tmp_path: Path, url: str, kind: str) -> None:
    _made(tmp_path, url)
    _plant(url, PLANTED[kind])
    env = {**os.environ, "DURABENCH_HOME": str(tmp_path / "b"), "DURABENCH_RESULTS_URL": url}
    proc = subprocess.run(
        [sys.executable, "-m", "starter", "report", "hand"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "# durabench run hand" in proc.stdout
    assert "skipped" in proc.stderr


@pytest.mark.parametrize(
    ("relative", "kept"),
    [
        ("results.json", True),
        ("results.json/x", False),
        ("tasks", False),
        ("tasks/t1", False),
        ("tasks/t1/baseline/attempt-1", False),
        (RESULT, True),
        (f"{RESULT}/more/x", False),
        ("tasks/t1/baseline/attempt-1/agent/stdout.txt", True),
        ("n" * 256, False),
        ("é" * 128, False),  # 256 bytes in UTF-8
        ("é" * 127, True),
    ],
)
def test_which_names_a_file_can_be_kept_at(relative: str, kept: bool) -> None:
    """With every name above also an object, as a planted key would make it."""
    objects = {"results.json", "tasks", "tasks/t1", RESULT}
    assert (unkeepable(relative, objects.__contains__) is None) == kept
