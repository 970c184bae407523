"""Record what the real Claude Code prints when its model API fails, as classifier fixtures.

Runs the CLI from a durabench agent image (``durabench-agent/claude-*``, built by any run
of claude-code) in a container on an internal Docker network, against the scripted API of
``tests/model_upstream.py`` answering every request with one failure mode; keeps stdout,
the end of stderr, the exit code and whether the time limit killed it, with the CLI's
version, under ``tests/fixtures/claude-code/<version>/<mode>.json``. The expected class of
each mode is the test's (``tests/unit/test_cli_failure_fixtures.py``), not recorded here.

    python scripts/record_cli_failures.py IMAGE [--seconds 40]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.model_upstream import ModelUpstream, Received, Reply, anthropic_stream  # noqa: E402

MODEL = "claude-haiku-4-5"


def _error(status: int, kind: str, message: str, **headers: str) -> Reply:
    return Reply(
        status=status,
        body={"type": "error", "error": {"type": kind, "message": message}},
        headers=headers,
    )


def _cut(received: Received) -> Reply:
    reply = anthropic_stream(MODEL, [{"type": "text", "text": "Looking at the file now"}])
    reply.cut_after = 3
    return reply


MODES: dict[str, Any] = {
    "rate_limit_retry_after": lambda r: _error(
        429,
        "rate_limit_error",
        "Number of request tokens has exceeded your per-minute rate limit",
        **{"retry-after": "30", "anthropic-ratelimit-requests-reset": "2026-11-26T15:00:00Z"},
    ),
    "rate_limit_bare": lambda r: _error(429, "rate_limit_error", "Rate limited"),
    "overloaded": lambda r: _error(529, "overloaded_error", "Overloaded"),
    "unauthorized": lambda r: _error(401, "authentication_error", "invalid x-api-key"),
    "forbidden": lambda r: _error(
        403, "permission_error", "Your organization does not have access to this model"
    ),
    "prompt_too_long": lambda r: _error(
        400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"
    ),
    "unknown_model": lambda r: _error(404, "not_found_error", f"model: {MODEL}"),
    "stream_cut": _cut,
}


def record(image: str, mode: str, seconds: int, out_dir: Path) -> None:
    """Run the CLI once against ``mode``'s API on a network of its own; keep what it did."""
    network = f"record-{uuid.uuid4().hex[:8]}"
    subprocess.run(
        ["docker", "network", "create", "--internal", network], check=True, capture_output=True
    )
    try:
        gateway = json.loads(
            subprocess.run(
                ["docker", "network", "inspect", network], check=True, capture_output=True
            ).stdout
        )[0]["IPAM"]["Config"][0]["Gateway"]
        with ModelUpstream(MODES[mode], host=gateway) as api:
            command = (
                "echo 'agent:x:10001:10001::/tmp:/bin/sh' >> /etc/passwd && "
                f"exec setpriv --reuid=10001 --regid=10001 --clear-groups env HOME=/tmp "
                f"timeout -s KILL {seconds} claude --print --verbose --output-format stream-json "
                f"--model {MODEL} --dangerously-skip-permissions -- 'Fix the bug in app.py'"
            )
            done = subprocess.run(
                [
                    "docker",
                    "run",
                    "--rm",
                    "--network",
                    network,
                    "-e",
                    f"ANTHROPIC_BASE_URL={api.url}",
                    "-e",
                    "ANTHROPIC_API_KEY=sk-ant-recording",
                    "-e",
                    "DISABLE_AUTOUPDATER=1",
                    image,
                    "sh",
                    "-c",
                    command,
                ],
                capture_output=True,
                text=True,
                check=False,
            )
            version = subprocess.run(
                ["docker", "run", "--rm", image, "claude", "--version"],
                capture_output=True,
                text=True,
                check=False,
            ).stdout.split()[0]
        fixture = {
            "cli": "claude-code",
            "version": version,
            "mode": mode,
            "exit_code": done.returncode,
            "timed_out": done.returncode == 137,
            "stdout": done.stdout.splitlines(),
            "stderr_tail": done.stderr[-4000:],
            "statuses": [MODES[mode](r).status for r in api.received],
        }
        path = out_dir / version / f"{mode}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(fixture, indent=1) + "\n")
        print(f"{mode}: exit {done.returncode}, {len(api.received)} requests -> {path}")
    finally:
        subprocess.run(["docker", "network", "rm", network], check=False, capture_output=True)


def main() -> None:
    """Record every mode (or the ``--mode`` ones) with the image given."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("image")
    parser.add_argument("--seconds", type=int, default=40)
    parser.add_argument("--mode", choices=sorted(MODES), action="append")
    args = parser.parse_args()
    out = REPO / "tests" / "fixtures" / "claude-code"
    for mode in args.mode or sorted(MODES):
        record(args.image, mode, args.seconds, out)


if __name__ == "__main__":
    main()
