"""Make a run's plan: resolve its tasks, apply the run policy, estimate. Nothing runs here.

Every rule a person could break by accident is checked before the plan is shown for
approval, each failing with one line that says what to change:

* the run id (and a rerun's ``--from``) is an id (:mod:`durabench.ids`): it names the
  results directory, whoever started the run;
* the model name has a provider id's shape, and the agent's provider has it (or the team
  lists it, or ``--allow-unknown-model``); every lane config exists and can run;
* tasks come from a suite, a selection file, a CodeScaleBench checkout, a service's dataset
  (or a dataset file) of text tasks, or a rerun of an earlier run's failed / infra / all
  tasks (pairs kept: every lane runs again);
* a single-config run (gap-fill) has, for every task, a valid counterpart of the other lane
  from an earlier run with the same model, category and agent CLI version, unless
  ``allow_unpaired`` (``ALLOW_UNPAIRED_SINGLE_CONFIG=true``), which the plan then records;
* the agent CLI version both lanes run is chosen (:mod:`durabench.planning.cli_choice`); a rerun
  runs the version its original ran.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from durabench.agents import Agent, CliAgent, agent_class, get_agent
from durabench.agents.llm_ids import check_known_model, check_model_name
from durabench.configs import get_config, missing_mcp_env
from durabench.errors import ConfigError
from durabench.ids import check_id
from durabench.models.prices import PriceTable
from durabench.models.run import MAX_NAMED_TASKS, Counterpart, RunPlan, RunRequest, TaskRef
from durabench.models.task import TaskSpec
from durabench.planning.cli_choice import CliChoice, choose_cli, other_versions, rerun_options
from durabench.planning.worker_checks import check_as_workers_will
from durabench.prices import PRICES_FILE, SOURCES, load_prices
from durabench.results.earlier_runs import counterparts, read_plan, rerun_task_ids, versions_ran
from durabench.service.datasets import dataset_dir, read_dataset_file, write_text_tasks
from durabench.service.wire_v1 import V1DatasetTask
from durabench.settings.paths import RunPaths
from durabench.settings.values import Settings
from durabench.tasks import load_suite, load_task
from durabench.tasks.selection import load_selection

__all__ = ["UNPAIRED_ENV", "check_request", "lanes_of", "make_plan"]

UNPAIRED_ENV = "ALLOW_UNPAIRED_SINGLE_CONFIG"
"""Set to ``true`` to run a single-config run without counterparts (recorded in the plan)."""

_SHOWN = 10
"""Tasks named in a gap-fill refusal before the rest are counted."""


def lanes_of(request: RunRequest) -> tuple[str, ...]:
    """The lanes a request runs, baseline first."""
    if request.config_mode == "baseline_only":
        return (request.baseline_config,)
    if request.config_mode == "full_only":
        return (request.full_config,)
    return (request.baseline_config, request.full_config)


def _rerun_request(request: RunRequest, settings: Settings) -> tuple[RunRequest, list[TaskSpec]]:
    """A rerun keeps the original's tasks source, agent, model, category and lanes."""
    if request.rerun_of is None or request.rerun is None:
        raise ConfigError("a rerun needs both --rerun failed|infra|all and --from RUN_ID")
    original = read_plan(settings.runs_dir, request.rerun_of)
    ids = set(
        rerun_task_ids(settings.runs_dir, request.rerun_of, request.rerun, settings.pass_threshold)
    )
    if not ids:
        raise ConfigError(
            f"run {request.rerun_of} has no {request.rerun} tasks to run again; "
            "try --rerun all, or check `python -m starter status " + request.rerun_of + "`"
        )
    keep = {"run_id", "parallel", "rerun", "rerun_of", "infra_retries", "infra_backoff_sec"}
    keep |= {"approval_timeout_sec", "pairs_per_run", "allow_unpaired"}
    effective = original.request.model_copy(update={k: getattr(request, k) for k in keep})
    ran = versions_ran(RunPaths.for_run(settings.runs_dir, request.rerun_of).root)
    options = rerun_options(
        agent_class(effective.agent.name), effective.agent.options, ran, request.rerun_of
    )
    pinned = effective.agent.model_copy(update={"options": options})
    effective = effective.model_copy(update={"agent": pinned})
    return effective, [load_task(t.task_dir) for t in original.tasks if t.task_id in ids]


def _run_root(request: RunRequest, settings: Settings) -> Path:
    return RunPaths.for_run(settings.runs_dir, request.run_id).root


def _tasks(
    request: RunRequest, settings: Settings, listed: Sequence[V1DatasetTask] | None
) -> tuple[str | None, list[TaskSpec]]:
    """The selection file used, if any, and the tasks."""
    if request.dataset_file:
        path = Path(request.dataset_file)
        doc = read_dataset_file(path)
        root = dataset_dir(_run_root(request, settings), doc.dataset_name or path.stem)
        return None, [load_task(d) for d in write_text_tasks(root, doc.tests)]
    if request.tasks_from_service and request.service and request.service.dataset:
        if listed is None:
            raise ConfigError("the service's dataset was not listed before planning")
        root = dataset_dir(_run_root(request, settings), request.service.dataset)
        return None, [load_task(d) for d in write_text_tasks(root, listed)]
    if request.selection or request.benchmarks_dir:
        path, specs = load_selection(
            request.selection, request.benchmarks_dir, benchmark=request.suite or None
        )
        return str(path.resolve()), specs
    return None, load_suite(request.suite, settings.home)


def _counterparts(
    request: RunRequest, specs: list[TaskSpec], settings: Settings, cli: CliChoice
) -> tuple[tuple[Counterpart, ...], tuple[str, ...], str]:
    """Counterparts of a single-config run, and the tasks lacking one (bypass only).

    Also, in words, the counterparts passed over because they ran another CLI version.
    """
    if request.config_mode == "paired":
        return (), (), ""
    baseline_only = request.config_mode == "baseline_only"
    other = request.full_config if baseline_only else request.baseline_config
    found, passed_over = counterparts(
        settings.runs_dir,
        model=request.agent.model,
        category=request.category,
        lane=other,
        task_ids=[s.task_id for s in specs],
        cli_version=cli.version,
    )
    versions = other_versions(request.agent.name, cli.version, passed_over, _SHOWN)
    lacking = tuple(s.task_id for s in specs if s.task_id.lower() not in found)
    if lacking and not request.allow_unpaired:
        shown = ", ".join(lacking[:_SHOWN])
        more = f" and {len(lacking) - _SHOWN} more" if len(lacking) > _SHOWN else ""
        pin = {o.version for o in passed_over.values() if o.version}
        fix = f"Pin --agent-opt version={min(pin)} to match them, run" if pin else "Run"
        raise ConfigError(
            f"{request.config_mode} is gap-fill, but {len(lacking)} task(s) have no valid "
            f"{other} counterpart (model {request.agent.model}, category {request.category}, "
            f"ended completed or model_*, the same agent CLI version) in an earlier run: "
            f"{shown}{more}. {f'Another CLI version: {versions}. ' if versions else ''}"
            f"{fix} them paired, or set {UNPAIRED_ENV}=true to run unpaired (recorded in the "
            "plan and report)"
        )
    pairs = tuple(
        Counterpart(task_id=s.task_id, run_id=found[s.task_id.lower()])
        for s in specs
        if s.task_id.lower() in found
    )
    said = f"counterparts of another CLI version run unpaired: {versions}" if versions else ""
    return pairs, lacking, said


def _with_dataset_name(request: RunRequest) -> RunRequest:
    """A dataset file's ``dataset_name`` goes with every service call, as ``--dataset-name``."""
    service = request.service
    if not request.dataset_file or service is None or service.dataset:
        return request
    name = read_dataset_file(Path(request.dataset_file)).dataset_name
    if not name:
        return request
    return request.model_copy(update={"service": service.model_copy(update={"dataset": name})})


def _answer_warnings(request: RunRequest, agent: Agent) -> tuple[str, ...]:
    """A service that grades the final message, and an agent that leaves none."""
    service = request.service
    if service is None or service.payload_type != "text" or service.response_file:
        return ()
    if agent.gives_final_message:
        return ()
    return (
        f"agent {request.agent.name} leaves no final message, which is what the service grades: "
        "every attempt is recorded 'no answer' and not sent. Grade a file of the attempt "
        "with --response-file (such as submission.patch), or run an agent that answers",
    )


def _left_out(cli: CliChoice, request: RunRequest) -> tuple[str, ...]:
    """Options the routed CLI version does not take, said so before approval."""
    return tuple(
        f"{request.agent.name} {cli.version} has no --{name}: left out of this run "
        "(durabench/configs/cli_routes.json)"
        for name in cli.left_out
    )


def check_request(request: RunRequest, settings: Settings, *, here: bool = True) -> None:
    """The checks of :func:`make_plan` that need no earlier run, service or worker state.

    The CLI makes them before it starts a run, so that a typo (a suite, agent, config or
    model name; a selection file; a CLI version such as `latest`) is refused in one line and
    leaves no failed run behind.
    The plan activity checks everything again on a worker, with what only it can see.
    Planned here, an attempt's input is checked as this process's worker will check it
    (:func:`~durabench.planning.worker_checks.check_as_workers_will`).

    ``here``: this process's worker plans the run, so suites and configs are checked as
    this machine knows them; otherwise (``--detach``) workers elsewhere may know suites
    and configs this machine does not, and they decide.

    Raises:
        ConfigError: a name or the tasks source is wrong; the message says what to do.
        TaskFormatError: a task directory is invalid.
    """
    check_id(request.run_id, "run id")
    if request.rerun_of is not None or request.rerun is not None:
        return  # a rerun takes its model, agent and tasks from the earlier run
    check_model_name(request.agent.model)
    agent = agent_class(request.agent.name)
    if agent.requires_model and request.agent.model == "none":
        raise _model_missing(request.agent.name)
    if agent.model_api is not None:  # agents with no model (oracle, replay) take any name
        check_known_model(request.agent.model, agent.model_api, settings.home, agent=agent.name)
    if issubclass(agent, CliAgent):  # a version must name one release, for every run
        agent.check_version(request.agent.options.get("version"))
    specs: list[TaskSpec] = []
    if request.dataset_file:
        read_dataset_file(Path(request.dataset_file))
    elif request.selection or request.benchmarks_dir:
        _, specs = load_selection(
            request.selection, request.benchmarks_dir, benchmark=request.suite or None
        )
    if here:
        for lane in lanes_of(request):
            get_config(lane)
        if not (request.dataset_file or request.selection or request.benchmarks_dir):
            if not request.tasks_from_service:
                specs = load_suite(request.suite, settings.home)
        check_as_workers_will(request, lanes_of(request), specs, settings)


def _model_missing(agent: str) -> ConfigError:
    return ConfigError(
        f"agent {agent} calls a model: name it with --model "
        "(such as claude-haiku-4-5, gpt-5-codex or gemini-2.5-pro)"
    )


def make_plan(
    request: RunRequest, settings: Settings, listed: Sequence[V1DatasetTask] | None = None
) -> RunPlan:
    """The plan of ``request``, checked against the run policy.

    ``listed``: the service dataset's tasks, when the request takes its tasks from it.

    Raises:
        ConfigError: a rule of the policy or a name is wrong; the message says what to do.
        TaskFormatError: a task directory is invalid.
    """
    check_id(request.run_id, "run id")
    if request.rerun_of is not None:
        check_id(request.rerun_of, "the run to rerun (--from)")
    selection: str | None = None
    if request.rerun_of is not None or request.rerun is not None:
        request, specs = _rerun_request(request, settings)
    else:
        selection, specs = _tasks(request, settings, listed)
    check_model_name(request.agent.model)
    asked = request.agent
    cli = choose_cli(agent_class(asked.name), asked.model, asked.options, request.category)
    pinned = request.agent.model_copy(update={"options": cli.options})
    request = request.model_copy(update={"agent": pinned})
    lanes = lanes_of(request)
    configs = [get_config(lane) for lane in lanes]
    agent = get_agent(request.agent.name, request.agent.options)
    if agent.requires_model and request.agent.model == "none":
        raise _model_missing(request.agent.name)
    for spec in specs:
        agent.check_task(spec)
    pairs, unpaired, passed_over = _counterparts(request, specs, settings, cli)
    prices, unpriced = _run_prices(agent, request.agent.model, settings)
    request = _with_dataset_name(request)
    multiplier = settings.timeout_multiplier
    tasks = tuple(
        TaskRef(
            task_id=s.task_id,
            task_dir=s.task_dir,
            agent_timeout_sec=s.time_limit_sec * multiplier,
            verifier_timeout_sec=s.verifier_timeout_sec,
            build_timeout_sec=s.build_timeout_sec,
        )
        for s in specs
    )
    return RunPlan(
        request=request,
        lanes=lanes,
        tasks=tasks,
        task_count=len(tasks),
        estimated_agent_hours=sum(t.agent_timeout_sec for t in tasks) * len(lanes) / 3600,
        results_dir=str(RunPaths.for_run(settings.runs_dir, request.run_id).root),
        mcp_env_missing=tuple(
            name
            for c in configs
            if c.mcp is not None and agent.uses_mcp
            for name in missing_mcp_env(c.mcp, os.environ)
        ),
        unpaired=unpaired,
        warnings=(
            *_answer_warnings(request, agent),
            *_left_out(cli, request),
            *([passed_over] if passed_over else []),
            *unpriced,
        ),
        prices=prices,
        selection_file=selection,
        **_forgeable(specs),
        counterparts=pairs,
        cli_version=cli.version,
        cli_version_note=cli.note,
    )


def _run_prices(agent: Agent, model: str, settings: Settings) -> tuple[PriceTable, tuple[str, ...]]:
    """The prices the run is costed with, and a warning for each one unverified or none.

    Its model's and those of the auxiliary models its agent calls on its own (Claude Code's
    small model): each request in an attempt's ledger is costed at its own model's price.
    Read once, on the planning worker, and kept with the run: every attempt is costed
    alike on any host, and the audit recomputes the cost with the same prices.
    """
    if agent.model_api is None:
        return PriceTable(), ()
    models = (model, *(m for m in agent.auxiliary_models if m != model))
    prices = load_prices(settings.home).only(agent.model_api, *models)
    warnings = (_price_warning(agent, model, m, prices, settings) for m in models)
    return prices, tuple(w for w in warnings if w)


def _price_warning(
    agent: Agent, model: str, called: str, prices: PriceTable, settings: Settings
) -> str:
    """What the plan says of ``called``'s price (``""``: nothing, it is published)."""
    api = agent.model_api or ""
    price = prices.price(api, called)
    where = f"{settings.home / PRICES_FILE} (see docs/results.md)"
    own = "" if called == model else f" (called by {agent.name} on its own, beside {model})"
    if price is not None and price.unverified:
        return (
            f"model {called}'s price ({api}) is unverified: no published source confirmed "
            f"it{own}; check it at {SOURCES[api]} and write it in {where}"
        )
    if price is not None:
        return ""
    whose = "its cost" if not own else "the cost of every attempt that uses it"
    return (
        f"model {called} has no price ({api}){own}: {whose} will be reported as unpriced, "
        f"never as 0; add it to {where}"
    )


def _forgeable(specs: list[TaskSpec]) -> dict[str, Any]:
    """The plan's fields naming the tasks whose tests run the submission as root."""
    ids = tuple(s.task_id for s in specs if s.runs_submission)
    return {"forgeable_tasks": ids[:MAX_NAMED_TASKS], "forgeable_count": len(ids)}
