"""Whether a sandbox quota holds: Daytona (the stand-in) with a quota of 3 and ``--parallel 50``.

``python bench/quota.py [--tasks 8] [--quota 3] [--parallel 50] [--wait 10]``

A paired run of ``--tasks`` copies of the bundled ``tensor-gelu-001`` (an instant
verifier), each lane a replay session of ``--wait`` seconds, on the Daytona backend:
the real SDK against the local stand-in of Daytona's API (``tests/daytona_standin.py``,
each sandbox a local container, builds uploaded to a loopback S3 over TLS), with
``DURABENCH_SANDBOX_QUOTA`` set and ``--parallel`` far above it. The stand-in counts the
sandboxes that exist at once; the target is that the count never passes the quota and
the run completes. Also printed: wall time against the ideal at the quota,
``ceil(2 x tasks / quota) x wait`` (no target: the stand-in builds and runs containers
on this machine, which a real Daytona does not).

The worker runs in this process (the stand-in's TLS trust is this process's). The timed
run is a round of the load guard (``_load.py``): its figures are printed only when the
machine was calm.
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
import time
import uuid
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import _path  # noqa: F401  (first: the checkout's own packages)
from _common import LoadGuard, add_tries, dev_server, machine, run_script, worker_settings
from concurrency import SUITE, write_plan, write_suite
from temporalio.client import Client

from durabench.models.agent import AgentSpec
from durabench.models.run import RunRequest
from durabench.settings.values import Settings


def parse() -> argparse.Namespace:
    """The bench's options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=8, help="paired tasks (2 sandboxes each)")
    parser.add_argument("--quota", type=int, default=3, help="DURABENCH_SANDBOX_QUOTA")
    parser.add_argument("--parallel", type=int, default=50, help="pairs asked for at once")
    parser.add_argument("--wait", type=float, default=10.0, help="seconds each session waits")
    parser.add_argument("--image", default=Settings.from_env().base_image)
    add_tries(parser)
    return parser.parse_args()


def start_standin(root: Path, stack: ExitStack) -> Any:
    """The stand-in, serving, its key and URL in this process's environment; ``stack`` stops it."""
    from tests.daytona_standin import API_KEY
    from tests.integration.daytona_fixtures import standin_serving

    os.environ["DAYTONA_API_KEY"] = API_KEY
    standin = stack.enter_context(standin_serving(root / "tls"))
    os.environ["DAYTONA_API_URL"] = standin.url
    os.environ["DURABENCH_DAYTONA_BACKOFF_SEC"] = "0.05"
    return standin


async def timed_run(
    client: Client, settings: Settings, plan: Path, args: argparse.Namespace
) -> tuple[float, str]:
    """One paired run to its end: seconds from request to result, and its status."""
    request = RunRequest(
        run_id=f"{SUITE}-{uuid.uuid4().hex[:6]}",
        suite=SUITE,
        agent=AgentSpec(name="replay", model="m", options={"plan": str(plan)}),
        parallel=args.parallel,
        infra_retries=0,
    )
    from tests.integration.runs import finished_run  # starts and approves, worker in-process

    began = time.monotonic()
    try:
        await finished_run(request, client, settings)
    except AssertionError as exc:  # it ended, not completed
        return time.monotonic() - began, f"not completed: {exc}"
    return time.monotonic() - began, "completed"


async def main() -> None:
    """Run the suite on the stand-in under the quota; print the most sandboxes at once."""
    args = parse()
    print(f"machine: {machine()}")
    print(
        f"tasks: {args.tasks} paired ({2 * args.tasks} sandboxes), quota {args.quota}, "
        f"--parallel {args.parallel}, each session waits {args.wait:g} s"
    )
    root = Path(tempfile.mkdtemp(prefix="durabench-bench-quota-"))
    (root / "tls").mkdir()
    guard = LoadGuard(os.cpu_count() or 1, tries=args.tries)
    with ExitStack() as stack:
        standin = start_standin(root, stack)
        async with dev_server() as client:
            base = worker_settings(client, root, args.image, "quota")
            settings = base.model_copy(update={"sandbox": "daytona", "sandbox_quota": args.quota})
            write_suite(settings.home, args.tasks)
            took, status = await timed_run(client, settings, write_plan(root, 0), args)
            print(f"warm-up (images built, 0 s sessions): {took:.1f} s, {status}")
            standin.reset_most_at_once()
            plan = write_plan(root, args.wait)
            took, status = await guard.round(
                "timed run", lambda: timed_run(client, settings, plan, args)
            )
        most = standin.most_at_once
    ideal = math.ceil(2 * args.tasks / args.quota) * args.wait
    print(f"run: {status}; wall time {took:.1f} s; ideal at the quota {ideal:.1f} s")
    print(f"        = {took / ideal:.2f}x (no target: the stand-in builds and runs on this host)")
    print(f"        most sandboxes at once (counted by the stand-in): {most}")
    met = most <= args.quota and status == "completed"
    print(
        guard.ratio_line(
            "quota most sandboxes at once / quota", most / args.quota, "<= 1.0, completed", met
        )
    )


if __name__ == "__main__":
    run_script(main)
