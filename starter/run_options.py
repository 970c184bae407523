"""``starter run``'s options, in groups: each group is one decorator.

A group holds the options of one question (a request file, what to run, which agent, how the run
behaves, which service grades it, how this command starts it), listed in ``--help``
in the order written here. The values land in :class:`starter.run_request.RunOptions`
by parameter name; :func:`starter.run_request.build_request` gives them their meaning.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from starter.options import (
    allow_unknown_model,
    checked_run_id,
    float_range,
    int_range,
    service_scale_option,
    service_url_option,
)

__all__ = [
    "agent_options",
    "config_options",
    "policy_options",
    "service_options",
    "source_options",
    "start_options",
]

FC = TypeVar("FC", bound=Callable[..., Any])


def _apply(options: Sequence[Callable[[FC], FC]], f: FC) -> FC:
    """Decorate ``f`` with ``options`` so that ``--help`` lists them in the order given."""
    for option in reversed(options):
        f = option(f)
    return f


def config_options(f: FC) -> FC:
    """The request from a file (``--config``), or the flags' request written as one."""
    return _apply(
        [
            click.option(
                "--config",
                "-c",
                "config_file",
                type=click.Path(dir_okay=False, exists=True, path_type=Path),
                default=None,
                help="Run the request in this TOML file (see --print-config) instead of the "
                "request flags; its relative paths are the file's.",
            ),
            click.option(
                "--print-config",
                is_flag=True,
                help="Print the request these flags make, as TOML for --config, and exit: "
                "nothing runs.",
            ),
        ],
        f,
    )


def source_options(f: FC) -> FC:
    """What to run: a suite, a selection, a checkout, which lanes, or a run to rerun."""
    return _apply(
        [
            click.option(
                "--suite",
                default="",
                help="Suite name (built-in: pytorch); with a selection, only tasks of that "
                "benchmark.",
            ),
            click.option(
                "--selection-file",
                "--selection",
                "selection",
                type=click.Path(dir_okay=False),
                default=None,
                help="CodeScaleBench selection file: run its tasks.",
            ),
            click.option(
                "--benchmarks-dir",
                type=click.Path(file_okay=False),
                default=None,
                help="CodeScaleBench checkout: task dirs, and its "
                "configs/selected_benchmark_tasks.json.",
            ),
            click.option(
                "--full-config",
                default="sourcegraph_full",
                show_default=True,
                help="The MCP lane's config (configs.json names them).",
            ),
            click.option(
                "--baseline-only",
                "config_mode",
                flag_value="baseline_only",
                help="Gap-fill: only the baseline lane (each task needs an earlier full-lane "
                "counterpart).",
            ),
            click.option(
                "--full-only",
                "config_mode",
                flag_value="full_only",
                help="Gap-fill: only the full lane (each task needs an earlier baseline "
                "counterpart).",
            ),
            click.option(
                "--rerun",
                type=click.Choice(["failed", "infra", "all"]),
                default=None,
                help="Run these tasks of --from again, both lanes, as a new linked run.",
            ),
            click.option(
                "--from",
                "rerun_of",
                default=None,
                metavar="RUN_ID",
                callback=checked_run_id,
                help="The run to rerun.",
            ),
        ],
        f,
    )


def agent_options(f: FC) -> FC:
    """Which agent runs each attempt, on which model, with which options."""
    return _apply(
        [
            click.option(
                "--agent",
                "-a",
                default="oracle",
                show_default=True,
                help="Agent adapter: claude-code, codex-cli, gemini-cli; oracle, nop, replay.",
            ),
            click.option(
                "--model", "-m", default="none", show_default=True, help="Model the agent uses."
            ),
            allow_unknown_model,
            click.option(
                "--effort",
                default=None,
                metavar="LEVEL",
                help="Reasoning effort the agent CLI is given (claude-code, codex-cli): low, "
                "high, ...",
            ),
            click.option(
                "--agent-opt",
                "agent_opts",
                multiple=True,
                metavar="KEY=VALUE",
                help="Agent option, repeatable (replay: plan=FILE; CLIs: version=V).",
            ),
        ],
        f,
    )


def policy_options(f: FC) -> FC:
    """How the run behaves: pairs in flight, category, retries, budget, approval wait.

    ``None`` leaves a value to the plan or to the setting named in the help.
    """
    return _apply(
        [
            click.option(
                "--parallel",
                "-n",
                default=None,
                type=int_range(min=1),
                help="Pairs in flight at once [derived by the plan from the accounts, the "
                "sandboxes and the model's rate limits].",
            ),
            click.option(
                "--category",
                type=click.Choice(["staging", "official"]),
                default="staging",
                show_default=True,
                help="official: numbers to publish (always the named agent CLI version); "
                "staging: a "
                "trial run (a task image's own CLI may run).",
            ),
            click.option(
                "--infra-retries",
                type=int_range(min=0),
                default=None,
                help="New attempts per arm after an infra failure [DURABENCH_INFRA_RETRIES, 2].",
            ),
            click.option(
                "--infra-backoff",
                type=float_range(min=0),
                default=None,
                help="Seconds before the first infra retry, doubling "
                "[DURABENCH_INFRA_BACKOFF_SEC, 60].",
            ),
            click.option(
                "--budget",
                type=int_range(min=1),
                default=None,
                metavar="TOKENS",
                help="Tokens one attempt may use (input, output, cache), enforced by the model "
                "gateway [DURABENCH_BUDGET_TOKENS, none].",
            ),
            click.option(
                "--max-spend",
                type=float_range(min=0, min_open=True),
                default=None,
                metavar="USD",
                help="The most the run may spend on model tokens, on every host together; "
                "pairs past it are not run [DURABENCH_MAX_SPEND_USD, none].",
            ),
            click.option(
                "--approval-timeout",
                type=float_range(min=0, min_open=True),
                default=None,
                help="Seconds an unapproved run waits before it ends "
                "[DURABENCH_APPROVAL_TIMEOUT_SEC, 86400].",
            ),
        ],
        f,
    )


def service_options(f: FC) -> FC:
    """The benchmark service that grades the run, and its tasks when it has them."""
    return _apply(
        [
            service_url_option(
                "Grade through this benchmark service instead of the local verifier."
            ),
            click.option(
                "--service-api",
                type=click.Choice(["legacy", "v1"]),
                default="legacy",
                show_default=True,
                help="The service's protocol: legacy (/evaluate-response/, /final-score/) or v1 "
                "(/v1/evaluate, /v1/score).",
            ),
            click.option(
                "--dataset-name",
                default=None,
                help="The service's dataset: sent with every request; alone, its text tasks "
                "are the run.",
            ),
            click.option(
                "--dataset-file",
                type=click.Path(dir_okay=False),
                default=None,
                help="Text tasks in a file ({dataset_name, tests: [{id, question}]}), graded "
                "by the service.",
            ),
            click.option("--payload-schema", default="", help="v1: the dataset's payload schema."),
            click.option(
                "--payload-type",
                type=click.Choice(["text", "artifact"]),
                default="text",
                show_default=True,
                help="v1: send the answer text, or upload a file of the attempt and grade its key.",
            ),
            click.option(
                "--response-file",
                default=None,
                help="File in the attempt directory holding the answer, or the artifact to "
                "upload (default: the final message; for an artifact, submission.patch).",
            ),
            service_scale_option(
                100.0,
                "The value of a full pass when results do not say (their max_score): a reward "
                "is pass_percentage / scale, refused outside 0-1.",
            ),
        ],
        f,
    )


def start_options(f: FC) -> FC:
    """How this command starts the run: its id, where attempts run, approval, staying."""
    return _apply(
        [
            click.option(
                "--run-id",
                default=None,
                callback=checked_run_id,
                help="Run id (default: suite, time, random suffix).",
            ),
            click.option(
                "--sandbox",
                type=click.Choice(["docker", "daytona"]),
                default=None,
                help="Where attempts run (default: DURABENCH_SANDBOX, else docker); see "
                "docs/daytona.md.",
            ),
            click.option("--yes", is_flag=True, help="Approve the plan at once (for scripts)."),
            click.option(
                "--detach", is_flag=True, help="Start the run and leave it to `python worker.py`."
            ),
            click.option(
                "--resume",
                is_flag=True,
                help="With --run-id of a running run: carry on with it even if its flags differ.",
            ),
        ],
        f,
    )
