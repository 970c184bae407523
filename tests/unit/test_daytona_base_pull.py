"""Whether Daytona can pull the base image, asked of a registry on loopback: every answer.

Daytona pulls a Dockerfile build's base image anonymously. A base image only the worker's
daemon has (README's ``durabench-base:bookworm``), or a private one, used to pass the plan
and fail every build of every attempt.
"""

from __future__ import annotations

import socket
import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from durabench.errors import ConfigError
from durabench.sandbox.daytona.base_pull import (
    ask_registry,
    challenge_params,
    check_base_pullable,
    registry_of,
)
from tests.registry_standin import MODES, registry_serving

# What the plan does on each answer: "" (the image is public), a refusal naming the
# status, or a warning (the worker cannot tell).
OUTCOMES = {
    "open": "",
    "public": "",
    "private": "refused 401",
    "basic": "refused 401",
    "token-refused": "refused 401",
    "token-garbage": "warned 200",
    "token-busy": "warned 503",
    "absent": "refused 404",
    "busy": "warned 429",
    "broken": "warned 500",
}


def test_every_mode_of_the_stand_in_has_an_outcome() -> None:
    assert set(OUTCOMES) == {*MODES, "absent"}


@pytest.mark.parametrize("mode", sorted(OUTCOMES))
def test_each_registry_answer_is_accepted_refused_or_warned_of(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DAYTONA_API_KEY", "dtn-secret-never-sent")
    with registry_serving({} if mode == "absent" else {"durabench/base": mode}) as registry:
        image = f"{registry.host()}/durabench/base:bookworm"
        where, expected = registry_of(image), OUTCOMES[mode]
        if expected.startswith("refused"):
            with pytest.raises(ConfigError) as refused:
                ask_registry(where, image)
            message = str(refused.value)
            assert message.startswith("Daytona preflight: Daytona cannot pull the base image")
            assert f"answered {expected.split()[1]}" in message and image in message
            assert "DURABENCH_BASE_IMAGE" in message and "--sandbox docker" in message
            assert "DURABENCH_DAYTONA_BASE_CHECK=false" in message
            assert "\n" not in message
        elif expected.startswith("warned"):
            said = ask_registry(where, image)
            assert f"answered {expected.split()[1]}" in said and image in said
        else:
            assert ask_registry(where, image) == ""
    # What the worker sent a registry: its own token at most, never a key of the worker's.
    sent = " ".join(f"{path} {headers}" for _, path, headers in registry.seen)
    assert "dtn-secret-never-sent" not in sent
    assert all(h.get("Authorization", "Bearer ").startswith("Bearer ") for *_, h in registry.seen)


def test_a_registry_the_worker_cannot_reach_is_a_warning_not_a_refusal() -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    image = f"127.0.0.1:{port}/durabench/base:bookworm"
    said = ask_registry(registry_of(image), image)
    assert said.startswith(f"could not ask http://127.0.0.1:{port} whether the base image")
    assert "every sandbox fails to build" in said
    # A name no resolver answers (RFC 6761), through the whole check: the same warning.
    said = check_base_pullable("registry.invalid/durabench/base:bookworm")
    assert said.startswith("could not ask https://registry.invalid whether the base image")


@pytest.mark.parametrize("host", ["localhost:5000", "127.0.0.1:5000", "[::1]:5000"])
def test_a_registry_on_the_worker_s_loopback_is_refused_without_asking(host: str) -> None:
    """It answers the worker, not Daytona: a registry there is as local as a daemon's tag."""
    with registry_serving({"durabench/base": "open"}) as registry:
        with pytest.raises(ConfigError) as refused:
            check_base_pullable(f"{host}/durabench/base:bookworm")
    assert "the worker's own loopback" in str(refused.value)
    assert "DURABENCH_DAYTONA_BASE_CHECK=false" in str(refused.value)
    assert registry.seen == []


def test_a_registry_on_a_private_address_is_a_warning() -> None:
    said = check_base_pullable("10.1.2.3:5000/durabench/base:bookworm")
    assert said.startswith("the base image 10.1.2.3:5000/durabench/base:bookworm is on 10.1.2.3")
    assert "a private address" in said


# No dot: Docker reads a first component with a dot (``0.0/x``) as a registry's host.
_COMPONENT = st.from_regex(r"[a-z0-9]+([_-][a-z0-9]+)?", fullmatch=True).filter(
    lambda c: c != "localhost"
)
_TAG = st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,20}", fullmatch=True)
_DIGEST = st.text(alphabet="0123456789abcdef", min_size=64, max_size=64).map(
    lambda h: f"sha256:{h}"
)
_HOSTS = {
    None: "https://registry-1.docker.io",
    "docker.io": "https://registry-1.docker.io",
    "ghcr.io": "https://ghcr.io",
    "registry.example.com:5000": "https://registry.example.com:5000",
    "localhost:5000": "http://localhost:5000",
    "127.0.0.1:5001": "http://127.0.0.1:5001",
}


@given(
    host=st.sampled_from(sorted(_HOSTS, key=str)),
    path=st.lists(_COMPONENT, min_size=1, max_size=3),
    reference=st.none() | _TAG | _DIGEST,
)
def test_an_image_name_is_asked_of_the_registry_docker_would_pull_it_from(
    host: str | None, path: list[str], reference: str | None
) -> None:
    name = "/".join(([host] if host else []) + path)
    image = name if reference is None else name + ("@" if ":" in reference else ":") + reference
    where = registry_of(image)
    assert where.url == _HOSTS[host]
    hub = host in (None, "docker.io")
    assert where.repository == ("library/" if hub and len(path) == 1 else "") + "/".join(path)
    assert where.reference == (reference or "latest")


@given(
    params=st.dictionaries(
        st.from_regex(r"[a-z][a-z0-9_-]{0,10}", fullmatch=True),
        st.text(alphabet=string.ascii_letters + string.digits + ':/._-" ', max_size=30),
        max_size=4,
    )
)
def test_a_challenge_s_parameters_are_read_back_as_sent(params: dict[str, str]) -> None:
    quoted = ",".join(f'{k}="{v.replace(chr(34), chr(92) + chr(34))}"' for k, v in params.items())
    assert challenge_params(f"Bearer {quoted}") == params


@given(st.text(max_size=200))
def test_any_challenge_text_is_read_without_raising(header: str) -> None:
    assert isinstance(challenge_params(header), dict)


@pytest.mark.parametrize(
    ("image", "url", "repository", "reference"),
    [
        (
            "durabench-base:bookworm",
            "https://registry-1.docker.io",
            "library/durabench-base",
            "bookworm",
        ),
        (
            "0.0/x",
            "https://0.0",
            "x",
            "latest",
        ),  # a dot in the first part: a host, as Docker reads it
        ("localhost/x:1", "http://localhost", "x", "1"),
        ("ghcr.io/org/img@sha256:" + "a" * 64, "https://ghcr.io", "org/img", "sha256:" + "a" * 64),
    ],
)
def test_names_docker_reads_as_a_host_are_asked_of_that_host(
    image: str, url: str, repository: str, reference: str
) -> None:
    where = registry_of(image)
    assert (where.url, where.repository, where.reference) == (url, repository, reference)
