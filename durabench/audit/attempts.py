"""Checks the attempt files alone can answer: pairs ended, models, exit classes, versions."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path

from durabench.audit.disk import AttemptKey, DiskAttempt, where
from durabench.classify import model_mismatch
from durabench.gateway import read_ledger
from durabench.models.audit import AuditCheck, Finding
from durabench.models.results import AttemptResult
from durabench.models.run import RunPlan
from durabench.models.verdict import MeteredUsage
from durabench.prices import attempt_cost

__all__ = ["check_attempts", "check_pairs"]

MISMATCH = "MODEL MISMATCH"
"""How the classifier marks an attempt that another model answered."""

GATEWAY_LEDGER = "gateway.jsonl"
"""The gateway's ledger of the attempt's model requests, kept in its directory."""


def check_pairs(plan: RunPlan, attempts: Mapping[AttemptKey, DiskAttempt]) -> list[Finding]:
    """Every planned task has every lane ended; attempts run 1..n, retried only after infra."""
    planned = {(t.task_id, lane) for t in plan.tasks for lane in plan.lanes}
    by_arm: dict[tuple[str, str], dict[int, DiskAttempt]] = defaultdict(dict)
    for key, found in attempts.items():
        by_arm[(key.task_id, key.lane)][key.attempt] = found
    out: list[Finding] = []
    for task_id, lane in sorted(planned - set(by_arm)):
        out.append(
            _pairs(
                f"{task_id}/{lane}",
                "no attempt of this planned lane ended: its "
                "attempts were deleted, or the run did not finish",
            )
        )
    for (task_id, lane), numbered in sorted(by_arm.items()):
        if (task_id, lane) not in planned:
            for n in sorted(numbered):
                key = AttemptKey(task_id, lane, n)
                out.append(
                    _pairs(
                        where(key),
                        "the run's plan has no such task and lane: an attempt added after the fact",
                    )
                )
            continue
        out += _arm(task_id, lane, numbered)
    return out


def _arm(task_id: str, lane: str, numbered: Mapping[int, DiskAttempt]) -> list[Finding]:
    out: list[Finding] = []
    last = max(numbered)
    for n in range(1, last + 1):
        key = AttemptKey(task_id, lane, n)
        if n not in numbered:
            out.append(
                _pairs(where(key), f"missing, yet attempt {last} exists: its directory was deleted")
            )
            continue
        result = numbered[n].result
        if n < last and result is not None and not result.infra:
            out.append(
                _pairs(
                    where(key),
                    f"ended {result.exit_class}, yet attempt {n + 1} "
                    "follows: only infra attempts are tried again (an attempt added "
                    "after the fact?)",
                )
            )
    return out


def _pairs(where_: str, message: str) -> Finding:
    return Finding(check="pairs", where=where_, message=message)


def check_attempts(
    plan: RunPlan, results: Iterable[AttemptResult], directories: Mapping[AttemptKey, Path]
) -> list[Finding]:
    """Served model, exit class against signals, and versions, attempt by attempt.

    ``directories`` hold each attempt's kept gateway ledger, the evidence of its model.
    """
    out = []
    for a in results:
        key = AttemptKey(a.task_id, a.lane, a.attempt)
        kept = directories.get(key)
        metered = read_ledger(kept / GATEWAY_LEDGER) if kept is not None else None
        out += [
            Finding(check=c, where=where(key), message=m) for c, m in _attempt(plan, a, metered)
        ]
    return out


def _attempt(
    plan: RunPlan, a: AttemptResult, metered: MeteredUsage | None
) -> list[tuple[AuditCheck, str]]:
    out: list[tuple[AuditCheck, str]] = [("served_model", m) for m in _model(plan, a, metered)]
    out += [("cost", m) for m in _cost(plan, a, metered)]
    if a.exit_class == "completed" and a.reward is None and not a.verifier_error:
        why = "completed without a verifier result: no reward and no verifier error recorded"
        out.append(("exit_class", why))
    if a.classifier_version is None and a.exit_class != "infra_other":  # else: the pipeline's
        out.append(("versions", f"ended {a.exit_class} with no classifier version recorded"))
    if a.durabench_version is None:
        why = "result.json records no durabench version: it was written before versions were "
        out.append(("versions", why + "recorded, or not by a worker"))
    return out


PRICES_RECORDED = 4
"""The plan schema from which a run records its prices: older runs' costs are not checked."""


def _cost(plan: RunPlan, a: AttemptResult, metered: MeteredUsage | None) -> list[str]:
    """The attempt's cost against its kept ledger at the prices its run recorded.

    The classifier's rule (:func:`~durabench.prices.attempt_cost`) with the plan's prices,
    not today's table: a cost edited after the run, or one the ledger cannot give, is named.
    """
    if metered is None or plan.schema_version < PRICES_RECORDED:
        return []
    expected = attempt_cost(metered, plan.prices, a.model)
    said = "none" if a.cost_usd is None else f"${a.cost_usd:.6f}"
    if expected.usd is None:
        if a.cost_usd is None:
            return []
        return [
            f"result.json says its cost is {said}, but the run's prices (plan.json) have none "
            f"for {expected.unpriced}, which its gateway ledger shows it used: the cost was "
            "written after the run"
        ]
    if a.cost_usd is not None and math.isclose(a.cost_usd, expected.usd, rel_tol=1e-9):
        return []
    return [
        f"result.json says its cost is {said}, but its gateway ledger's tokens at the run's "
        f"prices (plan.json) cost ${expected.usd:.6f}: the cost was edited"
    ]


def _model(plan: RunPlan, a: AttemptResult, metered: MeteredUsage | None) -> list[str]:
    """The model the attempt asked for and was served, by the rule that scored it.

    A swap is what :func:`~durabench.classify.model_mismatch` finds in the kept ledger,
    as the classifier found it: a served model an agent without a gateway reports (its
    transcript's word), or an auxiliary model beside the requested one, is none.
    """
    out = []
    if a.model != plan.request.agent.model:
        out.append(f"requested {a.model}, but the run's plan asks for {plan.request.agent.model}")
    said = model_mismatch(a.model, metered).removeprefix(f"{MISMATCH}: ")
    marked = MISMATCH in a.reason
    if said and not marked:
        out.append(
            f"the gateway's ledger shows {said}, and the attempt is not marked {MISMATCH} "
            "and kept out of the scores"
        )
    elif marked and a.included:
        out.append(
            f"served {a.served_model or 'another model'} for requested {a.model}, and the "
            f"attempt is not marked {MISMATCH} and kept out of the scores"
        )
    return out
