"""An attempt's ATIF trajectory as HTML, step by step: messages, tool calls, their results.

The file is durabench's own (written from the scrubbed transcript), but every message,
argument and result in it is the agent's or its tools' text: all of it is escaped.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from durabench.agents.atif import Step, Trajectory
from durabench.results.viewer.page import block, esc, read_tail
from durabench.wording import counted

__all__ = ["STEPS_PER_PAGE", "trajectory_html"]

STEPS_PER_PAGE = 200
"""Steps on one page; a long session is read a page at a time (``?from=N``)."""
_MAX_BYTES = 64_000_000
"""A trajectory larger than this is not parsed (a transcript is capped well below it)."""


def _step(step: Step) -> str:
    meta = [step.source, *(x for x in (step.model_name, step.timestamp) if x)]
    out = [
        f'<div class="step {esc(step.source)}" id="step-{step.step_id}">',
        f"<h3>step {step.step_id} · {esc(' · '.join(meta))}</h3>",
    ]
    if step.message:
        out.append(block(step.message))
    if step.reasoning_content:
        out.append(
            f"<details><summary>reasoning</summary>{block(step.reasoning_content)}</details>"
        )
    for call in step.tool_calls or ():
        args = json.dumps(call.arguments, indent=2, ensure_ascii=False)
        out.append(
            f'<div class="tool"><b>tool call</b> {esc(call.function_name)} '
            f'<span class="muted">{esc(call.tool_call_id)}</span>{block(args)}</div>'
        )
    for result in step.observation.results if step.observation else ():
        source = f" for {esc(result.source_call_id)}" if result.source_call_id else ""
        out.append(f'<div class="result"><b>result</b>{source}{block(result.content or "")}</div>')
    if step.metrics is not None:
        m = step.metrics
        out.append(
            f'<p class="muted">tokens in {m.prompt_tokens or 0:,} (cached {m.cached_tokens or 0:,})'
            f", out {m.completion_tokens or 0:,}</p>"
        )
    out.append("</div>")
    return "\n".join(out)


def trajectory_html(path: Path, start: int = 0) -> str:
    """The steps of the trajectory at ``path`` from step ``start`` (counting from 0)."""
    try:
        size = path.stat().st_size
        if size > _MAX_BYTES:
            return (
                f'<p class="warn">trajectory too large to show here ({counted(size, "byte")})</p>'
            )
        doc = Trajectory.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        return '<p class="muted">This attempt kept no trajectory.</p>'
    except (OSError, ValidationError) as exc:
        raw = read_tail(path) or ""
        return f'<p class="warn">not a readable ATIF trajectory: {esc(exc)}</p>{block(raw)}'
    steps = doc.steps[start : start + STEPS_PER_PAGE]
    agent = doc.agent
    head = (
        f'<p class="muted">{esc(agent.name)} {esc(agent.version)}'
        f"{' · ' + esc(agent.model_name) if agent.model_name else ''} · "
        f"{counted(len(doc.steps), 'step')} · {esc(doc.schema_version)}</p>"
    )
    more = []
    if start > 0:
        more.append(f'<a href="?from={max(0, start - STEPS_PER_PAGE)}">earlier steps</a>')
    if start + STEPS_PER_PAGE < len(doc.steps):
        more.append(f'<a href="?from={start + STEPS_PER_PAGE}">later steps</a>')
    nav = f"<p>{' · '.join(more)}</p>" if more else ""
    return "\n".join([head, nav, *(_step(s) for s in steps), nav])
