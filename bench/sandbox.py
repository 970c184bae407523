"""What durabench's Docker sandbox adds to an attempt, next to a plain ``docker run``.

``python bench/sandbox.py [--k 20] [--image IMAGE]``

Each repetition runs, in alternating order:

- sandbox: through ``durabench.sandbox.DockerSandbox`` (network off, as an agent without
  network gets): create and start, exec the agent ``true``, exec the verifier ``true``,
  collect (``read_tree`` of the three directories ``collect_artifacts`` copies), remove.
- docker run: ``docker run --rm --network none IMAGE true`` (the CLI, as a user would).
- sandbox, detached agent: the same, but the agent runs as ``run_agent`` runs it, a detached
  step with markers (``durabench.sandbox.detached.run_step``, with a launch record),
  waited for as it waits. The mkdir of its marker directories is timed but not counted:
  ``run_agent`` finds them made by provision's setup exec, which the other arms skip too.
- floor: the same attempt in the fewest raw Docker API calls (docker-py's low-level
  ``APIClient``, the sandbox's container options): create, start, exec create+start+inspect
  twice, one ``get_archive`` (of the first directory the sandbox arm reads), remove with
  force. What the shape of an attempt (a kept-alive container and two execs) costs before
  durabench adds anything.

Two warm-up repetitions are not counted. Each counted repetition is a round of the load
guard (``_load.py``): repeated while the machine is busy, and no ratio unless all were
calm. Medians are printed; the ratio is sandbox over docker run. Every container the
bench creates is removed, also on failure.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import subprocess
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import PurePosixPath

import _path  # noqa: F401  (first: the checkout's own packages)
import docker
from _common import LoadGuard, add_tries, machine
from docker.models import containers as docker_containers

from durabench.errors import DurabenchError
from durabench.sandbox import DockerSandbox, SandboxSpec, docker_client
from durabench.sandbox.detached import run_step, wrap_step
from durabench.settings.paths import SandboxPaths

TARGET = 1.2
PATHS = SandboxPaths()
PHASES = ("start", "agent", "verify", "collect", "remove")
SETUP = "setup"
"""The detached arm's mkdir of its marker directories: timed, not counted (see above)."""


async def sandbox_attempt(
    client: docker.DockerClient, image: str, label: str, detached: bool
) -> dict[str, float]:
    """One attempt through the sandbox API; seconds per phase."""
    spec = SandboxSpec(name=f"{label}-{uuid.uuid4().hex[:8]}", image=image, labels={label: "1"})
    box = DockerSandbox(spec, client=client)
    times: dict[str, float] = {}
    mark = time.monotonic()

    def lap(phase: str) -> None:
        nonlocal mark
        now = time.monotonic()
        times[phase], mark = now - mark, now

    try:
        await box.start()
        lap("start")
        if detached:  # the directories are provision's (one exec it makes anyway)
            logs, launched = PurePosixPath("/tmp/bench-logs"), PurePosixPath("/tmp/bench-runs")
            await box.exec(["mkdir", "-p", str(logs), str(launched)], user="0")
            lap(SETUP)
            script = wrap_step("true", logs, 0, 60, ">/dev/null", launched=launched)
            await run_step(box, script, logs, 0, launched=launched)
        else:
            await box.exec(["true"])
        lap("agent")
        await box.exec(["true"])
        lap("verify")
        for src in (PATHS.agent_logs, PATHS.verifier_logs, PATHS.durabench):
            with contextlib.suppress(FileNotFoundError):
                await box.read_tree(str(src))
        lap("collect")
    finally:
        await box.stop(delete=True)
    lap("remove")
    return times


def floor_attempt(client: docker.DockerClient, image: str, label: str) -> dict[str, float]:
    """The attempt's shape in the fewest daemon calls (8); seconds per phase."""
    spec = SandboxSpec(name=f"{label}-{uuid.uuid4().hex[:8]}", image=image, labels={label: "1"})
    api = client.api
    args = DockerSandbox(spec, client=client)._run_args()
    args.pop("detach")
    create = docker_containers._create_container_args(  # type: ignore[attr-defined]
        {**args, "version": api.api_version}
    )
    times: dict[str, float] = {}
    mark = time.monotonic()

    def lap(phase: str) -> None:
        nonlocal mark
        now = time.monotonic()
        times[phase], mark = now - mark, now

    made = api.create_container(**create)
    try:
        api.start(made["Id"])
        lap("start")
        for phase in ("agent", "verify"):
            run = api.exec_create(made["Id"], ["true"])
            api.exec_start(run["Id"])
            if api.exec_inspect(run["Id"])["ExitCode"] != 0:
                raise RuntimeError(f"floor: `true` failed in {spec.name}")
            lap(phase)
        with contextlib.suppress(docker.errors.NotFound):  # as the sandbox arm reads it
            stream, _ = api.get_archive(made["Id"], str(PATHS.agent_logs))
            for _chunk in stream:
                pass
        lap("collect")
    finally:
        api.remove_container(made["Id"], force=True)
    lap("remove")
    return times


def docker_run(image: str, label: str) -> dict[str, float]:
    """``docker run --rm --network none IMAGE true``; seconds."""
    began = time.monotonic()
    cmd = ["docker", "run", "--rm", "--network", "none", "--label", label, image, "true"]
    subprocess.run(cmd, check=True, capture_output=True)
    return {"run": time.monotonic() - began}


def remove_leftovers(client: docker.DockerClient, label: str) -> None:
    """Remove any container carrying this run's label (there should be none)."""
    for container in client.containers.list(all=True, filters={"label": label}):
        container.remove(force=True)


async def measure(
    client: docker.DockerClient, image: str, k: int, label: str, guard: LoadGuard
) -> None:
    """Run the repetitions and print the medians and the ratio."""
    arms: dict[str, Callable[[], Awaitable[dict[str, float]]]] = {
        "run": lambda: asyncio.to_thread(docker_run, image, label),
        "sandbox": lambda: sandbox_attempt(client, image, label, detached=False),
        "detached": lambda: sandbox_attempt(client, image, label, detached=True),
        "floor": lambda: asyncio.to_thread(floor_attempt, client, image, label),
    }
    samples: dict[str, list[dict[str, float]]] = {name: [] for name in arms}
    for rep in range(k + 2):
        order = list(arms) if rep % 2 else list(arms)[::-1]

        async def repetition(order: list[str] = order) -> dict[str, dict[str, float]]:
            return {name: await arms[name]() for name in order}

        if rep < 2:  # two warm-up repetitions
            await repetition()
            continue
        for name, sample in (await guard.round(f"repetition {rep - 1}", repetition)).items():
            samples[name].append(sample)

    def median_ms(name: str, phase: str | None = None) -> float:
        return 1000 * statistics.median(
            s[phase] if phase else sum(v for p, v in s.items() if p != SETUP) for s in samples[name]
        )

    base, total, slow, floor = (median_ms(name) for name in arms)

    def phases(name: str) -> str:
        return ", ".join(f"{p} {median_ms(name, p):.0f}" for p in PHASES)

    print(f"docker run --rm --network none {image} true: median {base:.0f} ms")
    print(f"durabench sandbox attempt: median {total:.0f} ms ({phases('sandbox')} ms)")
    print(
        f"durabench sandbox attempt, agent as a detached step (run_agent's way): "
        f"median {slow:.0f} ms ({slow / base:.2f}x docker run; agent "
        f"{median_ms('detached', 'agent'):.0f} ms, not counted: mkdir of the markers "
        f"{median_ms('detached', SETUP):.0f} ms)"
    )
    print(
        f"floor, the same attempt in 8 raw API calls: median {floor:.0f} ms "
        f"({phases('floor')} ms; {floor / base:.2f}x docker run; durabench adds "
        f"{total - floor:.0f} ms, {total / floor:.2f}x the floor)"
    )
    ratio = total / base
    print(guard.ratio_line("sandbox attempt / docker run", ratio, f"<= {TARGET}x", ratio <= TARGET))


async def main() -> None:
    """Check Docker and the image, measure, and remove every container of this run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=20, help="repetitions")
    parser.add_argument(
        "--image", default=os.environ.get("DURABENCH_BASE_IMAGE", "durabench-base:bookworm")
    )
    add_tries(parser)
    args = parser.parse_args()
    print(f"machine: {machine()}")
    print(f"image: {args.image}; repetitions: {args.k} (+2 warm-up), interleaved")
    try:
        client = docker_client()
    except DurabenchError as exc:
        raise SystemExit(f"error: {exc}") from None
    try:
        client.images.get(args.image)
    except docker.errors.ImageNotFound:
        raise SystemExit(
            f"error: image {args.image} is missing: build it with "
            f"`bash scripts/build-base-image.sh {args.image}` or set DURABENCH_BASE_IMAGE"
        ) from None
    label = f"durabench-bench-{uuid.uuid4().hex[:8]}"
    try:
        await measure(client, args.image, args.k, label, LoadGuard(tries=args.tries))
    finally:
        remove_leftovers(client, label)
        client.close()


if __name__ == "__main__":
    asyncio.run(main())
