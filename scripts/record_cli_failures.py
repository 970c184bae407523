"""Record what the real agent CLIs print when their model API fails, as classifier fixtures.

Runs a CLI (claude-code, codex-cli or gemini-cli) from a durabench agent image
(``durabench-agent/<cli>-*``, built by any run of that agent) in a container on an
internal Docker network, against the scripted API of ``tests/model_upstream.py``
answering every request with one failure mode in the provider's own error shape; keeps
stdout, the end of stderr, the exit code and whether the time limit killed it, with the
CLI's version, under ``tests/fixtures/<cli>/<version>/<mode>.json``. The expected class of
each mode is the test's (``tests/unit/test_cli_failure_fixtures.py``), not recorded here.

    python scripts/record_cli_failures.py CLI IMAGE [--seconds 40] [--mode M ...]
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from durabench.agents.codex_cli import PROVIDER, PROVIDER_TOML  # noqa: E402
from durabench.agents.gemini_cli import SETTINGS  # noqa: E402
from tests.model_upstream import (  # noqa: E402
    ModelUpstream,
    Received,
    Reply,
    anthropic_stream,
    gemini_stream,
    openai_stream,
)

Script = Callable[[Received], Reply]
PROMPT = "Fix the bug in app.py"
HOME = "/tmp"
"""The agent user's home inside the recording container."""


@dataclass(frozen=True)
class Cli:
    """How to run one CLI headless against a base URL, and its API's failure modes."""

    binary: str
    """Its executable, asked for ``--version``."""
    command: Callable[[str], str]
    """The shell command, given the API's base URL."""
    env: Callable[[str], dict[str, str]]
    """The container's environment, given the API's base URL."""
    modes: dict[str, Script]
    """Each failure mode's API: every request answered alike, in the provider's shape."""
    files: dict[str, str]
    """Files written under the agent's home before it runs (its settings)."""


# --- Claude Code: Anthropic Messages -------------------------------------------------

CLAUDE_MODEL = "claude-haiku-4-5"


def _anthropic_error(status: int, kind: str, message: str, **headers: str) -> Reply:
    return Reply(
        status=status,
        body={"type": "error", "error": {"type": kind, "message": message}},
        headers=headers,
    )


def _anthropic_cut(received: Received) -> Reply:
    reply = anthropic_stream(CLAUDE_MODEL, [{"type": "text", "text": "Looking at the file now"}])
    reply.cut_after = 3
    return reply


CLAUDE = Cli(
    binary="claude",
    command=lambda url: (
        f"claude --print --verbose --output-format stream-json --model {CLAUDE_MODEL} "
        f"--dangerously-skip-permissions -- {shlex.quote(PROMPT)}"
    ),
    env=lambda url: {
        "ANTHROPIC_BASE_URL": url,
        "ANTHROPIC_API_KEY": "sk-ant-recording",
        "DISABLE_AUTOUPDATER": "1",
    },
    files={},
    modes={
        "rate_limit_retry_after": lambda r: _anthropic_error(
            429,
            "rate_limit_error",
            "Number of request tokens has exceeded your per-minute rate limit",
            **{"retry-after": "30", "anthropic-ratelimit-requests-reset": "2026-11-26T15:00:00Z"},
        ),
        "rate_limit_bare": lambda r: _anthropic_error(429, "rate_limit_error", "Rate limited"),
        "overloaded": lambda r: _anthropic_error(529, "overloaded_error", "Overloaded"),
        "unauthorized": lambda r: _anthropic_error(
            401, "authentication_error", "invalid x-api-key"
        ),
        "forbidden": lambda r: _anthropic_error(
            403, "permission_error", "Your organization does not have access to this model"
        ),
        "prompt_too_long": lambda r: _anthropic_error(
            400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"
        ),
        "unknown_model": lambda r: _anthropic_error(
            404, "not_found_error", f"model: {CLAUDE_MODEL}"
        ),
        "stream_cut": _anthropic_cut,
    },
)

# --- Codex CLI: OpenAI Responses ------------------------------------------------------

CODEX_MODEL = "gpt-5-codex"


def _openai_error(
    status: int,
    kind: str,
    code: str | None,
    message: str,
    headers: dict[str, str] | None = None,
    **extra: object,
) -> Script:
    error = {"type": kind, "code": code, "message": message, "param": None, **extra}
    return lambda r: Reply(status=status, body={"error": error}, headers=headers or {})


def _openai_failed(code: str, message: str) -> Script:
    """A stream that starts and then says ``response.failed`` (how errors come mid-stream)."""

    def reply(received: Received) -> Reply:
        response = {
            "id": "resp_scripted",
            "model": CODEX_MODEL,
            "status": "failed",
            "error": {"code": code, "message": message},
        }
        events = [
            {"type": "response.created", "response": {"id": "resp_scripted", "model": CODEX_MODEL}},
            {"type": "response.failed", "response": response},
        ]
        return Reply(events=events, headers={"content-type": "text/event-stream"})

    return reply


def _openai_cut(received: Received) -> Reply:
    reply = openai_stream(
        CODEX_MODEL, "Looking at the file now", input_tokens=100, cached=0, output_tokens=5
    )
    reply.cut_after = 3
    return reply


_RESET = int(time.time()) + 3 * 3600
"""When the scripted usage limit resets: three hours after recording began (epoch)."""


def _codex_command(url: str) -> str:
    base_url = f"model_providers.{PROVIDER}.base_url={json.dumps(url + '/v1')}"
    return (
        f"codex exec --json --model {CODEX_MODEL} -c {shlex.quote(base_url)} "
        f"--dangerously-bypass-approvals-and-sandbox --skip-git-repo-check -- "
        f"{shlex.quote(PROMPT)}"
    )


CODEX = Cli(
    binary="codex",
    command=_codex_command,
    env=lambda url: {"CODEX_HOME": f"{HOME}/.codex", "OPENAI_API_KEY": "sk-proj-recording"},
    files={".codex/config.toml": PROVIDER_TOML},
    modes={
        "rate_limit_retry_after": _openai_error(
            429,
            "tokens",
            "rate_limit_exceeded",
            f"Rate limit reached for {CODEX_MODEL} in organization org-recording on tokens per "
            "min (TPM): Limit 30000, Used 30000, Requested 1200. Please try again in 30s.",
            headers={
                "retry-after": "30",
                "x-ratelimit-reset-requests": "30s",
                "x-ratelimit-reset-tokens": "30s",
            },
        ),
        "rate_limit_bare": _openai_error(
            429, "requests", "rate_limit_exceeded", "Rate limit reached for requests"
        ),
        "rate_limit_stream": _openai_failed(
            "rate_limit_exceeded",
            f"Rate limit reached for {CODEX_MODEL} in organization org-recording on tokens per "
            "min (TPM): Limit 30000, Used 30000, Requested 1200. Please try again in 20s.",
        ),
        "usage_limit": _openai_error(
            429,
            "usage_limit_reached",
            None,
            "The usage limit has been reached",
            plan_type="plus",
            resets_at=_RESET,
            resets_in_seconds=3 * 3600,
        ),
        "usage_not_included": _openai_error(
            429, "usage_not_included", None, "Your plan does not include Codex usage"
        ),
        "quota_exceeded": _openai_error(
            429,
            "insufficient_quota",
            "insufficient_quota",
            "You exceeded your current quota, please check your plan and billing details.",
        ),
        "overloaded": _openai_error(
            503, "server_error", "server_is_overloaded", "The server is overloaded"
        ),
        "unauthorized": _openai_error(
            401,
            "invalid_request_error",
            "invalid_api_key",
            "Incorrect API key provided: sk-proj-********ding. You can find your API key at "
            "https://platform.openai.com/account/api-keys.",
        ),
        "forbidden": _openai_error(
            403,
            "invalid_request_error",
            None,
            "You have insufficient permissions for this operation. "
            "Missing scopes: api.responses.write.",
        ),
        "prompt_too_long": _openai_error(
            400,
            "invalid_request_error",
            "context_length_exceeded",
            "Your input exceeds the context window of this model. "
            "Please adjust your input and try again.",
        ),
        "prompt_too_long_stream": _openai_failed(
            "context_length_exceeded",
            "Your input exceeds the context window of this model. "
            "Please adjust your input and try again.",
        ),
        "unknown_model": _openai_error(
            404,
            "invalid_request_error",
            "model_not_found",
            f"The model `{CODEX_MODEL}` does not exist or you do not have access to it.",
        ),
        "stream_cut": _openai_cut,
    },
)

# --- Gemini CLI: Gemini streamGenerateContent ----------------------------------------

GEMINI_MODEL = "gemini-2.5-flash"
_QUOTA = "type.googleapis.com/google.rpc.QuotaFailure"


def _gemini_error(
    status: int, name: str, message: str, *details: dict[str, object], **headers: str
) -> Script:
    error = {"code": status, "message": message, "status": name, "details": list(details)}
    return lambda r: Reply(status=status, body={"error": error}, headers=headers)


def _quota(quota_id: str, metric: str) -> dict[str, object]:
    violation = {
        "quotaMetric": f"generativelanguage.googleapis.com/{metric}",
        "quotaId": quota_id,
        "quotaDimensions": {"location": "global", "model": GEMINI_MODEL},
        "quotaValue": "10",
    }
    return {"@type": _QUOTA, "violations": [violation]}


def _gemini_cut(received: Received) -> Reply:
    reply = gemini_stream(
        GEMINI_MODEL, ["Looking at", " the file now"], prompt=100, output_tokens=5
    )
    reply.cut_after = 1
    return reply


_EXHAUSTED = "Resource has been exhausted (e.g. check quota)."

GEMINI = Cli(
    binary="gemini",
    command=lambda url: (
        f"gemini --output-format stream-json --model {GEMINI_MODEL} --yolo "
        f"--prompt {shlex.quote(PROMPT)}"
    ),
    env=lambda url: {"GOOGLE_GEMINI_BASE_URL": url, "GEMINI_API_KEY": "AIza-recording"},
    files={".gemini/settings.json": json.dumps(SETTINGS, indent=2) + "\n"},
    modes={
        "rate_limit_retry_after": _gemini_error(
            429,
            "RESOURCE_EXHAUSTED",
            "You exceeded your current quota, please check your plan and billing details. "
            "Please retry in 30s.",
            _quota(
                "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
                "generate_content_free_tier_requests",
            ),
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "30s"},
            **{"retry-after": "30"},
        ),
        "rate_limit_bare": _gemini_error(429, "RESOURCE_EXHAUSTED", _EXHAUSTED),
        "usage_limit": _gemini_error(
            429,
            "RESOURCE_EXHAUSTED",
            "You exceeded your current quota, please check your plan and billing details.",
            _quota(
                "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
                "generate_content_free_tier_requests",
            ),
        ),
        "usage_limit_long_delay": _gemini_error(
            429,
            "RESOURCE_EXHAUSTED",
            "You exceeded your current quota, please check your plan and billing details.",
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "7200s"},
        ),
        "overloaded": _gemini_error(
            503, "UNAVAILABLE", "The model is overloaded. Please try again later."
        ),
        "unauthorized": _gemini_error(
            401,
            "UNAUTHENTICATED",
            "Request had invalid authentication credentials. Expected OAuth 2 access token, "
            "login cookie or other valid authentication credential.",
        ),
        "key_invalid": _gemini_error(
            400,
            "INVALID_ARGUMENT",
            "API key not valid. Please pass a valid API key.",
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": "API_KEY_INVALID",
                "domain": "googleapis.com",
            },
        ),
        "forbidden": _gemini_error(403, "PERMISSION_DENIED", "The caller does not have permission"),
        "prompt_too_long": _gemini_error(
            400,
            "INVALID_ARGUMENT",
            "The input token count (1200000) exceeds the maximum number of tokens allowed "
            "(1048576).",
        ),
        "unknown_model": _gemini_error(
            404,
            "NOT_FOUND",
            f"models/{GEMINI_MODEL} is not found for API version v1beta, or is not supported "
            "for generateContent. Call ListModels to see the list of available models and "
            "their supported methods.",
        ),
        "stream_cut": _gemini_cut,
    },
)

CLIS = {"claude-code": CLAUDE, "codex-cli": CODEX, "gemini-cli": GEMINI}


def record(name: str, image: str, mode: str, seconds: int, out_dir: Path) -> None:
    """Run the CLI once against ``mode``'s API on a network of its own; keep what it did."""
    cli = CLIS[name]
    script = cli.modes[mode]
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
        with ModelUpstream(script, host=gateway) as api:
            writes = "".join(
                f"mkdir -p {shlex.quote(str(Path(HOME, p).parent))} && "
                f"printf %s {shlex.quote(text)} > {shlex.quote(f'{HOME}/{p}')} && "
                for p, text in cli.files.items()
            )
            command = (
                "echo 'agent:x:10001:10001::/tmp:/bin/sh' >> /etc/passwd && "
                f"{writes}chown -R 10001:10001 {HOME} && "
                f"exec setpriv --reuid=10001 --regid=10001 --clear-groups env HOME={HOME} "
                f"timeout -s KILL {seconds} {cli.command(api.url)} < /dev/null"
            )
            env = [arg for k, v in cli.env(api.url).items() for arg in ("-e", f"{k}={v}")]
            done = subprocess.run(
                ["docker", "run", "--rm", "--network", network, *env, image, "sh", "-c", command],
                capture_output=True,
                text=True,
                check=False,
            )
            said = subprocess.run(
                ["docker", "run", "--rm", image, cli.binary, "--version"],
                capture_output=True,
                text=True,
                check=False,
            ).stdout
            version = re.search(r"\d+\.\d+\.\d+", said)
        if version is None:
            raise SystemExit(f"{image}: {cli.binary} --version said {said!r}, no version")
        fixture = {
            "cli": name,
            "version": version.group(),
            "mode": mode,
            "exit_code": done.returncode,
            "timed_out": done.returncode == 137,
            "stdout": done.stdout.splitlines(),
            "stderr_tail": done.stderr[-4000:],
            "statuses": [script(r).status for r in api.received],
        }
        path = out_dir / version.group() / f"{mode}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(fixture, indent=1) + "\n")
        print(f"{name} {mode}: exit {done.returncode}, {len(api.received)} requests -> {path}")
    finally:
        subprocess.run(["docker", "network", "rm", network], check=False, capture_output=True)


def main() -> None:
    """Record every mode (or the ``--mode`` ones) with the image given."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cli", choices=sorted(CLIS))
    parser.add_argument("image")
    parser.add_argument("--seconds", type=int, default=40)
    parser.add_argument("--mode", action="append", help="a mode of the CLI's (default: all)")
    args = parser.parse_args()
    modes = CLIS[args.cli].modes
    unknown = set(args.mode or ()) - set(modes)
    if unknown:
        parser.error(f"{args.cli} has no mode {sorted(unknown)}: choose from {sorted(modes)}")
    out = REPO / "tests" / "fixtures" / args.cli
    for mode in args.mode or sorted(modes):
        record(args.cli, args.image, mode, args.seconds, out)


if __name__ == "__main__":
    main()
