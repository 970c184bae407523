"""A hardened sandbox keeps a hostile task to itself.

Each test starts a container as the product does for an agent that needs no network
(oracle, nop, replay), with a small process limit, adds the ``agent`` user with the CLI
adapters' own setup step (which the kept capabilities must allow), and then tries what a
task must not be able to do: reach the Docker socket or the network, keep capabilities,
gain privileges, exhaust the host's processes. The last test runs such a task end to end
with the oracle agent: it ends as the task's failure (a ``model_*`` class, reward 0, no
retry), not as infrastructure.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import docker
import docker.errors
import pytest
from temporalio.client import Client

from durabench.agents import AGENT_UID, AGENT_USER, AgentContext, get_agent
from durabench.errors import ConfigError
from durabench.models.agent import AgentSpec
from durabench.models.run import RunRequest
from durabench.sandbox import DockerSandbox, SandboxSpec
from durabench.settings.values import Settings
from durabench.tasks import load_suite
from tests.integration.runs import containers_of, finished_run

pytestmark = pytest.mark.docker

PIDS = 64
"""Small enough that a fork bomb reaches it in a moment."""

CAP_BITS = {
    "CHOWN": 0,
    "DAC_OVERRIDE": 1,
    "DAC_READ_SEARCH": 2,
    "FOWNER": 3,
    "FSETID": 4,
    "KILL": 5,
    "SETGID": 6,
    "SETUID": 7,
    "SETPCAP": 8,
    "NET_BIND_SERVICE": 10,
    "NET_RAW": 13,
    "SYS_CHROOT": 18,
    "SYS_ADMIN": 21,
    "MKNOD": 27,
    "AUDIT_WRITE": 29,
    "SETFCAP": 31,
}
"""Bit numbers of ``linux/capability.h`` for the names that matter here."""

CONNECT = """
import socket, sys
for host in sys.argv[1:]:
    try:
        socket.create_connection((host, 53), timeout=2).close()
        print("reached", host)
    except OSError as exc:
        print("refused", host, exc)
"""

BOMB = """
import os
while True:
    try:
        os.fork()
    except OSError:
        pass
"""
"""A fork bomb that survives failed forks (a shell's dies out by itself). Started with
``setsid``, it escapes its exec's process group, so ``timeout`` cannot end it; while it
holds every pid, no exec can fork (not even ``docker exec``'s own runtime, at times)."""


def _spec(**changes: Any) -> SandboxSpec:
    """A spec like the product's for an agent without network, with a small process limit."""
    image = os.environ.get("DURABENCH_BASE_IMAGE") or Settings.from_env().base_image
    fields: dict[str, Any] = {
        "name": f"durabench-hardening-{uuid.uuid4().hex[:8]}",
        "image": image,
        "labels": {"durabench.run": "hardening"},
        "network": "none",
        "memory_mb": 512,
        "cpus": 1.0,
        "pids_limit": PIDS,
    }
    return SandboxSpec(**(fields | changes))


async def _started(spec: SandboxSpec) -> DockerSandbox:
    sb = DockerSandbox(spec)
    await sb.start()
    ctx = AgentContext(task=load_suite("pytorch")[0], model="m")
    setup = await sb.exec(["mkdir", "-p", str(ctx.paths.workspace)], user="0")
    assert setup.exit_code == 0, setup
    for step in get_agent("claude-code").setup_commands(ctx):  # as the product adds the user
        done = await sb.exec(["sh", "-c", step.command], user=step.user)
        assert done.exit_code == 0, done  # the kept capabilities are enough for setup
    return sb


@pytest.fixture
async def sandbox() -> AsyncIterator[DockerSandbox]:
    sb = await _started(_spec())
    try:
        yield sb
    finally:
        await sb.stop(delete=True)


async def _sh(sb: DockerSandbox, script: str, user: str | None = None) -> str:
    result = await sb.exec(["sh", "-c", script], user=user, timeout_s=20)
    assert result.exit_code == 0, result
    return result.stdout


def _live_pids(sb: DockerSandbox) -> int:
    """The sandbox's process count, read from outside: it needs no fork inside."""
    stats = sb.client.api.stats(sb.spec.name, stream=False, one_shot=True)
    return int(stats["pids_stats"]["current"])


async def _until_pids(sb: DockerSandbox, holds: Callable[[int], bool], what: str) -> int:
    """Wait for the process count to meet ``holds``; the count of checks only stops a hang.

    Each check is a ``docker stats`` call (about a second), so the guard is minutes long.
    """
    for _ in range(150):
        n = await asyncio.to_thread(_live_pids, sb)
        if holds(n):
            return n
        await asyncio.sleep(0.1)
    pytest.fail(f"the sandbox never had {what} (last count {n})")


def _status(text: str) -> dict[str, str]:
    return dict(line.split(":\t", 1) for line in text.splitlines() if ":\t" in line)


async def _pids(sb: DockerSandbox, name: str) -> str:
    """A file of the sandbox's pids cgroup (v2 at the root, v1 under ``pids/``)."""
    out = await _sh(sb, f"cat /sys/fs/cgroup/{name} 2>/dev/null || cat /sys/fs/cgroup/pids/{name}")
    return out.strip()


async def test_no_docker_socket_inside_and_a_socket_mount_is_refused(
    sandbox: DockerSandbox,
) -> None:
    out = await _sh(sandbox, "ls /var/run/docker.sock /run/docker.sock 2>&1 || true")
    assert out.count("No such file or directory") == 2, out
    for mounts in (
        {"/var/run/docker.sock": "/var/run/docker.sock"},
        {"/run": "/host-run"},
        {"/srv/empty": "/run/docker.sock"},
    ):
        with pytest.raises(ConfigError, match="Docker socket.*remove that mount"):
            _spec(mounts=mounts)


async def test_no_network_but_loopback(sandbox: DockerSandbox) -> None:
    devices = await _sh(sandbox, "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '")
    assert devices.split() == ["lo"]
    await sandbox.write_file("/tmp/connect.py", CONNECT)
    out = await _sh(sandbox, "python3 /tmp/connect.py 1.1.1.1 172.17.0.1", user=AGENT_USER)
    assert "reached" not in out and out.count("refused") == 2, out


async def test_root_keeps_only_the_kept_capabilities_and_the_agent_none(
    sandbox: DockerSandbox,
) -> None:
    kept = set(sandbox.spec.cap_add)
    assert kept == {"CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "SETUID", "SETGID", "KILL"}
    mask = sum(1 << CAP_BITS[name] for name in kept)
    root = _status(await _sh(sandbox, "cat /proc/self/status", user="0"))
    for field in ("CapEff", "CapPrm", "CapBnd"):
        assert int(root[field], 16) == mask, (field, root[field])
    assert root["NoNewPrivs"] == "1"
    agent = _status(await _sh(sandbox, "cat /proc/self/status", user=AGENT_USER))
    assert (int(agent["CapEff"], 16), int(agent["CapPrm"], 16)) == (0, 0)
    assert agent["NoNewPrivs"] == "1"


@pytest.mark.parametrize("no_new_privileges", [True, False])
async def test_a_setuid_binary_gives_the_agent_nothing(no_new_privileges: bool) -> None:
    sb = await _started(_spec(no_new_privileges=no_new_privileges))
    try:
        await _sh(sb, "cp /usr/bin/id /tmp/id-suid && chmod u+s /tmp/id-suid", user="0")
        euid = (await _sh(sb, "/tmp/id-suid -u", user=AGENT_USER)).strip()
    finally:
        await sb.stop(delete=True)
    assert euid == (str(AGENT_UID) if no_new_privileges else "0")  # the flag is what stops it


async def test_a_fork_bomb_ends_at_the_limit_and_the_sandbox_answers(
    sandbox: DockerSandbox,
) -> None:
    script = "f() { f | f & }; f & while :; do :; done"  # one fork, then a loop that needs none
    idle = await asyncio.to_thread(_live_pids, sandbox)
    bomb = await sandbox.exec(["sh", "-c", script], user=AGENT_USER, timeout_s=2)
    assert bomb.exit_code != 0 and bomb.timed_out, bomb
    await _until_pids(sandbox, lambda n: n <= idle, "its bomb's last forks gone")
    alive = await sandbox.exec(["sh", "-c", "echo alive"], user=AGENT_USER, timeout_s=20)
    assert alive.stdout == "alive\n"  # at once: the bomb left nothing behind
    assert await _pids(sandbox, "pids.max") == str(PIDS)
    refused = dict([(await _pids(sandbox, "pids.events")).split()])
    assert int(refused["max"]) > 0  # forks were refused at the limit, inside the sandbox
    attrs = sandbox.client.api.inspect_container(sandbox.spec.name)["HostConfig"]
    assert (attrs["PidsLimit"], attrs["Memory"]) == (PIDS, 512 * 2**20)
    await sandbox.stop(delete=True)
    with pytest.raises(docker.errors.NotFound):
        sandbox.client.containers.get(sandbox.spec.name)


async def test_an_escaped_fork_bomb_holds_the_limit_until_a_restart(
    sandbox: DockerSandbox,
) -> None:
    await sandbox.write_file("/tmp/bomb.py", BOMB)
    await sandbox.write_file("/tmp/work.txt", "left by the agent")
    script = "setsid python3 /tmp/bomb.py >/dev/null 2>&1 & while :; do :; done"
    bomb = await sandbox.exec(["sh", "-c", script], user=AGENT_USER, timeout_s=1)
    assert bomb.timed_out, bomb
    held = await _until_pids(sandbox, lambda n: n >= PIDS, "its escaped bomb at the limit")
    assert held == PIDS  # it lives on, held at the limit and not past it
    await sandbox.stop(delete=False)  # every process goes with the container's init
    await sandbox.start()
    assert await _sh(sandbox, "cat /tmp/work.txt") == "left by the agent"  # files stay
    assert int(await _pids(sandbox, "pids.current")) < 10


HOSTILE = """#!/bin/bash
# Reaches for the Docker socket and the network, fork-bombs, and fixes nothing.
ls /var/run/docker.sock /run/docker.sock 2>&1 | sed 's/^/socket: /'
python3 -c "import socket; socket.create_connection(('1.1.1.1', 53), timeout=2)" 2>&1 \\
    | tail -n 1 | sed 's/^/network: /'
timeout 3 sh -c 'f() { f | f & }; f & while :; do :; done'
echo "bomb: over"
exit 1
"""


async def test_a_hostile_task_fails_as_its_own_problem(
    client: Client, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCEGRAPH_URL", "https://sourcegraph.invalid")
    monkeypatch.setenv("SOURCEGRAPH_ACCESS_TOKEN", "sgp_unused")
    task = load_suite("pytorch")[1]
    hostile = settings.home / "suites" / "hostile" / task.task_id
    shutil.copytree(task.task_dir, hostile)
    (hostile / "solution" / "solve.sh").write_text(HOSTILE)
    request = RunRequest(
        run_id=f"it-{uuid.uuid4().hex[:8]}", suite="hostile", agent=AgentSpec(name="oracle")
    )
    paths, result = await finished_run(request, client, settings)
    assert {a.lane for a in result.attempts} == set(result.plan.lanes)
    for attempt in result.attempts:
        assert attempt.attempt == 1 and attempt.reward == 0.0, attempt  # scored, not retried
        assert attempt.exit_class.startswith("model_"), attempt
        out = (paths.attempt(task.task_id, attempt.lane, 1) / "agent" / "stdout.txt").read_text()
        assert out.count("No such file or directory") == 2, out
        assert "network: OSError: [Errno 101] Network is unreachable" in out, out
        assert "bomb: over" in out, out
    assert containers_of(request.run_id) == []
