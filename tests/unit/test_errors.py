import gc

import pytest

from durabench.errors import NON_RETRYABLE, DockerUnavailable, DurabenchError, non_retryable_names
from durabench.sandbox import docker_client


def test_non_retryable_names_match_classes() -> None:
    assert non_retryable_names() == [c.__name__ for c in NON_RETRYABLE]
    assert all(issubclass(c, DurabenchError) for c in NON_RETRYABLE)
    assert "ImageBuildError" in non_retryable_names()
    assert "SandboxError" not in non_retryable_names()


# docker-py leaks the socket of its failed version probe; collect it inside this test.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_no_docker_daemon_says_how_to_start_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    with pytest.raises(DockerUnavailable) as err:
        docker_client()
    assert "start it" in str(err.value) and "DOCKER_HOST" in str(err.value)
    del err
    gc.collect()
