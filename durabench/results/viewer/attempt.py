"""The viewer's page of one attempt, with everything kept of it.

Its exit class and why, the trajectory, the verifier's output, the gateway's ledger, the
build log and the diff the agent left.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

from pydantic import ValidationError

from durabench.documents import loads_json
from durabench.errors import ConfigError
from durabench.models.results import AttemptResult
from durabench.results.viewer.page import block, esc, href, page, read_tail, table
from durabench.results.viewer.steps import trajectory_html
from durabench.settings.paths import FINAL_MESSAGE, TRAJECTORY, RunPaths

__all__ = ["LEDGER", "attempt_page"]

LEDGER = "gateway.jsonl"
"""The gateway's ledger of the attempt's model requests, in the attempt's directory."""
_LEDGER_BYTES = 1_000_000
"""The end of the ledger shown: its last few thousand requests (a line is a few hundred bytes)."""


def _cost(a: AttemptResult) -> str:
    """The attempt's cost of record: metered, or unpriced (never $0), or not reported."""
    if a.cost_usd is not None:
        return f"${a.cost_usd:.4f}"
    return f"unpriced ({a.unpriced_model} has no price)" if a.unpriced_model else "-"


def _summary(a: AttemptResult) -> str:
    css = "infra" if a.infra else a.exit_class
    facts = [
        ("reward", "-" if a.reward is None else f"{a.reward:g}"),
        ("counted", "yes" if a.included else "no (infra, or no reward)"),
        ("agent exit code", "-" if a.agent_exit_code is None else str(a.agent_exit_code)),
        ("timed out", "yes" if a.timed_out else "no"),
        ("wall time", f"{a.wall_seconds:,.0f} s"),
        ("files changed", str(a.files_changed)),
        ("model", f"{a.model} (served: {a.served_model or 'unknown'})"),
        (
            "tokens",
            f"in {a.tokens.input:,}, out {a.tokens.output:,}, cached {a.tokens.cache_read:,}",
        ),
        ("cost", _cost(a)),
    ]
    if a.cli_cost_usd is not None:
        facts.append(("cost the CLI printed", f"${a.cli_cost_usd:.4f} (a cross-check only)"))
    if a.verifier_error:
        facts.append(("verifier error", a.verifier_error))
    if a.build_failed:
        facts.append(("build", "failed (see the build log)"))
    facts += [("left out", note) for note in a.left_out]
    facts += [
        (f"{t.phase} phase", f"{(t.finished_at - t.started_at).total_seconds():,.0f} s")
        for t in a.timings
    ]
    facts += [("hosts", ", ".join(a.hosts))] if a.hosts else []
    items = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in facts)
    return (
        f'<p id="exit">exit class <span class="class {esc(css)}">{esc(a.exit_class)}</span>'
        f' — <span id="why">{esc(a.reason or "no reason recorded")}</span></p>'
        f"<dl>{items}</dl>"
    )


def _ledger(lines: str) -> str:
    """The ledger's requests, one row each (a line cut by the tail or a crash is skipped)."""
    rows = []
    for line in lines.splitlines():
        try:
            e = loads_json(line)
            at = datetime.fromtimestamp(float(e.get("at", 0)), UTC).isoformat(timespec="seconds")
        except (ValueError, TypeError, AttributeError, OverflowError):
            continue
        usage = {k: v for k, v in (e.get("usage") or {}).items() if v}
        rows.append(
            [esc(at)]
            + [esc(e.get(k, "")) for k in ("provider", "path", "status", "asked_model", "refused")]
            + [esc(json.dumps(usage)), esc(e.get("retry_after", "")), esc(e.get("seconds", ""))]
        )
    header = [
        "at (UTC)",
        "provider",
        "path",
        "status",
        "model",
        "refused",
        "usage",
        "retry-after",
        "s",
    ]
    return table("ledger", header, rows)


def _files(where: str, title: str, texts: list[tuple[str, str]]) -> list[str]:
    out = [f"<h2>{esc(title)}</h2>"]
    if not texts:
        return [*out, f'<p class="muted">none kept for {esc(where)}</p>']
    for name, text in texts:
        out += [f"<h3>{esc(name)}</h3>", block(text)]
    return out


def attempt_page(paths: RunPaths, task_id: str, lane: str, number: int, start: int = 0) -> str:
    """One attempt, everything kept of it.

    Raises:
        ConfigError: no such attempt (or an id that would leave the run's directory).
    """
    where = paths.attempt(task_id, lane, number)
    try:
        a = AttemptResult.model_validate_json((where / "result.json").read_text())
    except (OSError, ValidationError) as exc:
        raise ConfigError(f"no result for {task_id} / {lane} / attempt {number}: {exc}") from exc
    run_id = paths.root.name
    verifier = sorted(p for p in (where / "verifier").glob("*") if p.is_file())
    texts = [(p.name, read_tail(p) or "") for p in verifier]
    body = [_summary(a)]
    final = read_tail(where / FINAL_MESSAGE)
    if final:
        body += ["<h2>Final message</h2>", block(final)]
    body += ['<h2 id="trajectory">Trajectory</h2>', trajectory_html(where / TRAJECTORY, start)]
    body += _files("the verifier", "Verifier output", texts)
    ledger = read_tail(where / LEDGER, _LEDGER_BYTES)
    body += ["<h2>Gateway ledger</h2>"]
    body += [_ledger(ledger)] if ledger else ['<p class="muted">no model request was metered</p>']
    if ledger and ledger.startswith("[…"):
        body.append(f'<p class="muted">only its last requests: the whole file is {LEDGER}</p>')
    for name, title in (("submission.patch", "Diff the agent left"), ("build.log", "Build log")):
        text = read_tail(where / name)
        body += _files(name, title, [(name, text)] if text else [])
    raw = f"{href('runs', run_id, 'tasks', task_id, lane, f'attempt-{number}')}"
    body.append(f'<p><a href="{raw}files/">every file kept</a></p>')
    crumbs = [
        (href("runs", run_id), run_id),
        (href("runs", run_id, "tasks", task_id), task_id),
        (raw, f"{lane} attempt {number}"),
    ]
    return page(f"{task_id} · {lane} · attempt {number}", crumbs, body)
