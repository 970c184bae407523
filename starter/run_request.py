"""The :class:`RunRequest` that ``starter run``'s options ask for, built without I/O.

The command reads the settings and the environment, then hands its options here: what
each option does to the request, and every refusal of a combination of them, is then
one function to call and test, with no Temporal, Docker or environment behind it.
Refusals are click's usage errors, so the command exits 2 with the usage shown.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import click

from durabench.ids import id_prefix
from durabench.models.agent import AgentSpec
from durabench.models.benchmark_service import PayloadKind, ServiceApi, ServiceTarget
from durabench.models.run import Category, ConfigMode, RunRequest
from durabench.settings.values import Settings

__all__ = [
    "RunOptions",
    "agent_spec",
    "build_request",
    "new_run_id",
    "run_source",
    "run_stamp",
    "service_target",
    "settings_defaults",
    "with_settings",
]


@dataclass(frozen=True, kw_only=True)
class RunOptions:
    """``starter run``'s options that shape the request, by parameter name.

    The defaults are the command's (a test holds them equal), so a test names only the
    options it sets. ``None`` leaves the value to the settings or to the plan.
    """

    suite: str = ""
    selection: str | None = None
    benchmarks_dir: str | None = None
    full_config: str = "sourcegraph_full"
    config_mode: ConfigMode | None = None
    rerun: Literal["failed", "infra", "all"] | None = None
    rerun_of: str | None = None
    agent: str = "oracle"
    model: str = "none"
    effort: str | None = None
    agent_opts: tuple[str, ...] = ()
    parallel: int | None = None
    category: Category = "staging"
    infra_retries: int | None = None
    infra_backoff: float | None = None
    budget: int | None = None
    max_spend: float | None = None
    approval_timeout: float | None = None
    service_url: str | None = None
    service_api: ServiceApi = "legacy"
    dataset_name: str | None = None
    dataset_file: str | None = None
    payload_schema: str = ""
    payload_type: PayloadKind = "text"
    response_file: str | None = None
    service_scale: float = 100.0
    run_id: str | None = None


def run_stamp() -> str:
    """``<UTC timestamp>-<4 hex>``: what makes a generated run id sortable and unique.

    The clock and the randomness, kept out of :func:`build_request` so it stays pure.
    """
    return f"{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}-{uuid.uuid4().hex[:4]}"


def new_run_id(source: str, stamp: str) -> str:
    """``<source>-<stamp>``, always an id: ``source`` is any text (a suite, a file's name)."""
    return f"{id_prefix(source, 'run')}-{stamp}"


def run_source(options: RunOptions) -> str:
    """What a generated run id starts with: the suite, a file's name, the rerun or dataset."""
    named = options.selection or options.dataset_file
    return (
        options.suite
        or (Path(named).stem if named else None)
        or options.rerun_of
        or options.dataset_name
        or "run"
    )


def service_target(options: RunOptions) -> ServiceTarget | None:
    """The benchmark service that grades the run; ``None`` without ``--service-url``.

    Raises:
        click.BadParameter: the service options do not make a target (the message says why).
    """
    if not options.service_url:
        return None
    try:
        return ServiceTarget(
            url=options.service_url,
            api=options.service_api,
            dataset=options.dataset_name,
            payload_schema=options.payload_schema,
            payload_type=options.payload_type,
            response_file=options.response_file,
            scale=options.service_scale,
        )
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--service-url") from exc


def agent_spec(options: RunOptions) -> AgentSpec:
    """The agent and its model; its options are each ``--agent-opt``, then ``--effort``.

    Raises:
        click.BadParameter: an ``--agent-opt`` is not ``KEY=VALUE``.
    """
    opts = {}
    for pair in options.agent_opts:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="--agent-opt")
        opts[key] = value
    effort = {"effort": options.effort} if options.effort else {}
    return AgentSpec(name=options.agent, model=options.model, options=opts | effort)


def _check_sources(options: RunOptions) -> None:
    """Refuse a run that names no tasks, or names them in a way that cannot run."""
    if (options.rerun is None) != (options.rerun_of is None):
        raise click.UsageError("--rerun and --from go together: --rerun failed --from RUN_ID")
    from_service = bool(options.service_url and options.dataset_name)
    named = options.suite or options.selection or options.benchmarks_dir or options.rerun_of
    if not (named or options.dataset_file or from_service):
        raise click.UsageError(
            "say what to run: --suite NAME, --selection-file FILE, --benchmarks-dir DIR, "
            "--rerun failed|infra|all --from RUN_ID, or with --service-url: --dataset-name "
            "NAME or --dataset-file FILE"
        )
    if options.dataset_file and not options.service_url:
        raise click.UsageError("--dataset-file tasks are graded by a service: add --service-url")


def _resolved(path: str | None) -> str | None:
    """An absolute path: the run's workers may not share this shell's directory."""
    return str(Path(path).resolve()) if path else None


def build_request(
    options: RunOptions, settings: Settings, *, allow_unpaired: bool, stamp: str
) -> RunRequest:
    """The request the options ask for; what they leave out comes from ``settings``.

    ``allow_unpaired`` is ``ALLOW_UNPAIRED_SINGLE_CONFIG=true``, and ``stamp`` ends a
    generated run id (:func:`run_stamp`): the caller reads them, so this does no I/O.
    Paths are made absolute against the current directory.

    Raises:
        click.UsageError: the options name nothing to run, ``--rerun`` without ``--from``
            (or the reverse), or ``--dataset-file`` without ``--service-url``.
        click.BadParameter: the service options make no target, or an ``--agent-opt``
            is not ``KEY=VALUE``.
    """
    _check_sources(options)
    service = service_target(options)
    given = {
        "infra_retries": options.infra_retries,
        "infra_backoff_sec": options.infra_backoff,
        "approval_timeout_sec": options.approval_timeout or None,
        "budget_tokens": options.budget,
        "max_spend_usd": options.max_spend,
    }
    return RunRequest(
        service=service,
        run_id=options.run_id or new_run_id(run_source(options), stamp),
        suite=options.suite,
        selection=_resolved(options.selection),
        benchmarks_dir=_resolved(options.benchmarks_dir),
        dataset_file=_resolved(options.dataset_file),
        full_config=options.full_config,
        config_mode=options.config_mode or "paired",
        rerun=options.rerun,
        rerun_of=options.rerun_of,
        allow_unpaired=allow_unpaired,
        parallel=options.parallel,
        category=options.category,
        agent=agent_spec(options),
        **with_settings(given, settings),
    )


def settings_defaults(settings: Settings) -> dict[str, Any]:
    """The request fields a run takes from ``settings`` when it does not set them.

    The flags' request and a ``--config`` file's both fill what they leave out from here:
    a file without ``max_spend_usd`` is capped as the flags are.
    """
    return {
        "infra_retries": settings.infra_retries,
        "infra_backoff_sec": settings.infra_backoff_sec,
        "approval_timeout_sec": settings.approval_timeout_sec,
        "budget_tokens": settings.gateway_budget_tokens,
        "max_spend_usd": settings.max_spend_usd,
    }


def with_settings(given: Mapping[str, Any], settings: Settings) -> dict[str, Any]:
    """``given``'s fields (``None``: not given; 0 is given) over :func:`settings_defaults`."""
    return settings_defaults(settings) | {k: v for k, v in given.items() if v is not None}
