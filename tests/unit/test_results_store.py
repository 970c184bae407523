"""The results store: one run's files written on one host and read on another, via S3.

The store is a real S3-compatible server on loopback (moto's server mode); each "host"
is its own ``DURABENCH_HOME``, sharing only the results URL.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from durabench.errors import ConfigError
from durabench.results.store import LocalStore, ObjectStore, open_store, pull, pulled, push
from durabench.settings.paths import RunPaths
from durabench.settings.values import Settings
from tests.s3_server import s3_endpoint_fixture, s3_url_fixture  # noqa: F401 (fixtures)


def _host(tmp_path: Path, name: str, url: str | None) -> Settings:
    return Settings(home=tmp_path / name, results_url=url)


def _write(paths: RunPaths, relative: str, text: str) -> Path:
    path = paths.root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_a_run_written_on_one_host_is_read_on_another(tmp_path: Path, url: str) -> None:
    a, b = _host(tmp_path, "a", url), _host(tmp_path, "b", url)
    paths_a = RunPaths.for_run(a.runs_dir, "r1")
    attempt = paths_a.attempt("t1", "baseline", 1)
    _write(paths_a, "plan.json", '{"plan": 1}')
    _write(paths_a, "tasks/t1/baseline/attempt-1/result.json", '{"reward": 1}')
    _write(paths_a, "tasks/t1/baseline/attempt-1/agent/stdout.txt", "transcript")
    push(a, paths_a, paths_a.plan)
    push(a, paths_a, attempt)

    paths_b = pulled(b, "r1")

    assert paths_b.root == b.runs_dir / "r1"
    assert paths_b.plan.read_text() == '{"plan": 1}'
    assert [p.relative_to(paths_b.root).as_posix() for p in paths_b.attempt_results()] == [
        "tasks/t1/baseline/attempt-1/result.json"
    ]
    assert (paths_b.root / "tasks/t1/baseline/attempt-1/agent/stdout.txt").read_text() == (
        "transcript"
    )


def test_a_file_rewritten_on_one_host_is_read_anew_on_the_other(tmp_path: Path, url: str) -> None:
    a, b = _host(tmp_path, "a", url), _host(tmp_path, "b", url)
    paths_a = RunPaths.for_run(a.runs_dir, "r2")
    _write(paths_a, "results.json", "first")
    push(a, paths_a)
    assert pulled(b, "r2").results.read_text() == "first"

    _write(paths_a, "results.json", "second, longer")
    push(a, paths_a, paths_a.results)

    assert (
        pull(
            b, RunPaths.for_run(b.runs_dir, "r2"), b.runs_dir / "r2/results.json"
        ).results.read_text()
        == "second, longer"
    )


def test_pull_of_one_file_fetches_only_it(tmp_path: Path, url: str) -> None:
    a, b = _host(tmp_path, "a", url), _host(tmp_path, "b", url)
    paths_a = RunPaths.for_run(a.runs_dir, "r3")
    _write(paths_a, "plan.json", "plan")
    _write(paths_a, "run.json", "run")
    push(a, paths_a)

    paths_b = RunPaths.for_run(b.runs_dir, "r3")
    pull(b, paths_b, paths_b.plan)

    assert paths_b.plan.read_text() == "plan"
    assert not paths_b.run.exists()


def test_without_a_url_the_runs_directory_is_the_store(tmp_path: Path) -> None:
    local = _host(tmp_path, "a", None)
    paths = RunPaths.for_run(local.runs_dir, "r4")
    _write(paths, "plan.json", "plan")

    assert isinstance(open_store(local), LocalStore)
    push(local, paths)
    assert pulled(local, "r4").plan.read_text() == "plan"
    assert sorted(p.name for p in paths.root.iterdir()) == ["plan.json"]


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("gs://bucket/results", "s3://bucket/prefix"),
        ("/mnt/results", "s3://bucket/prefix"),
        ("s3://key:secret@bucket/results", "AWS_ACCESS_KEY_ID"),
        ("s3:///results", "names no bucket"),
    ],
)
def test_a_bad_results_url_is_refused_with_what_to_give(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str, says: str
) -> None:
    monkeypatch.setenv("DURABENCH_HOME", str(tmp_path))
    monkeypatch.setenv("DURABENCH_RESULTS_URL", value)

    with pytest.raises(ConfigError) as err:
        Settings.from_env()

    assert "DURABENCH_RESULTS_URL" in str(err.value)
    assert says in str(err.value)
    assert "secret" not in str(err.value)


def test_a_missing_bucket_is_named_at_check(url: str) -> None:
    with pytest.raises(ConfigError, match="Create the bucket 'no-such-bucket-here'"):
        ObjectStore("s3://no-such-bucket-here/results").check()


def test_missing_credentials_are_named_at_check(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")

    with pytest.raises(ConfigError, match="no credentials for .*AWS_ACCESS_KEY_ID"):
        ObjectStore(url).check()


def test_an_unreachable_endpoint_is_named_at_check(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # discard: nothing answers
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")

    with pytest.raises(ConfigError, match="cannot reach .*AWS_ENDPOINT_URL"):
        ObjectStore(url).check()


def test_a_reachable_bucket_passes_check(url: str) -> None:
    ObjectStore(url).check()


def test_a_key_climbing_out_of_its_run_is_skipped_and_named_not_fatal(
    tmp_path: Path, url: str
) -> None:
    """Anyone who can write to the bucket can plant one; the run's report still works."""
    import os
    import subprocess
    import sys

    from tests.unit.results_set import hand_result

    a, b = _host(tmp_path, "a", url), _host(tmp_path, "b", url)
    paths_a = RunPaths.for_run(a.runs_dir, "hand")
    _write(paths_a, "results.json", hand_result().model_dump_json())
    push(a, paths_a)
    store = ObjectStore(url)
    planted = f"{store.root}/hand/tasks/../../../../planted.txt"
    store.fs.pipe_file(planted, b"outside the run")
    assert planted in store.fs.find(f"{store.root}/hand")

    env = {**os.environ, "DURABENCH_HOME": str(b.home), "DURABENCH_RESULTS_URL": url}
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
    assert "planted.txt" in proc.stderr and "skipped" in proc.stderr
    assert not any(p.name == "planted.txt" for p in tmp_path.rglob("*"))
