"""The viewer's page shell and the few HTML pieces every page uses.

Everything an agent, a task or a service wrote is data: it enters a page only through
:func:`esc` (markup escaped, control characters written out) and only as text, never as
markup or an attribute that runs. The pages carry no script at all, and the server forbids
one (``Content-Security-Policy``), so an escaping slip still runs nothing.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import quote

from durabench.results.html_policy import CSP_META
from durabench.text_safety import visible_controls
from durabench.wording import counted

__all__ = ["block", "esc", "href", "page", "read_tail", "table"]

TEXT_CAP = 64_000
"""Characters of one file or one message shown inline; the rest is a link away."""

_CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 78rem;
  padding: 0 1rem 3rem; color: #1d2330; }
nav { padding: .6rem 0; border-bottom: 1px solid #dde; margin-bottom: 1rem; }
h1 { font-size: 1.4rem; overflow-wrap: anywhere; } h2 { font-size: 1.1rem; margin-top: 1.8rem;
  border-bottom: 1px solid #dde; } h3 { font-size: 1rem; margin: .2rem 0; }
.scroll { overflow-x: auto; } table { border-collapse: collapse; margin: .5rem 0; }
th, td { border: 1px solid #dde; padding: .25rem .6rem; text-align: left; vertical-align: top;
  overflow-wrap: break-word; } th { background: #f3f4f8; }
pre { background: #f6f7f9; border: 1px solid #e3e5ea; padding: .5rem; overflow-x: auto;
  white-space: pre-wrap; overflow-wrap: anywhere; max-height: 40rem; overflow-y: auto; }
.step { border: 1px solid #dde; border-radius: 6px; padding: .5rem .8rem; margin: .8rem 0; }
.step.user { background: #f4f8ff; } .step.system { background: #fff8ec; }
.tool { border-left: 3px solid #4c72b0; padding-left: .6rem; margin: .4rem 0; }
.result { border-left: 3px solid #55a868; padding-left: .6rem; margin: .4rem 0; }
.warn { color: #b3261e; font-weight: 600; } .muted { color: #6b7080; }
.class { font-weight: 600; } .class.infra { color: #8a5a00; } .class.completed { color: #1b7a3a; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; }
dt { color: #6b7080; } dd { margin: 0; overflow-wrap: anywhere; }
"""


def esc(text: object) -> str:
    """``text`` as inert HTML text: markup escaped, control characters written out."""
    return html.escape(visible_controls(str(text)))


def href(*parts: str) -> str:
    """An absolute link to the viewer's page ``parts`` (each part one path segment)."""
    return "/" + "/".join(quote(p, safe="") for p in parts) + "/"


def page(title: str, crumbs: Iterable[tuple[str, str]], body: Iterable[str]) -> str:
    """A whole page: ``crumbs`` are (link, label) pairs leading to this page."""
    trail = " / ".join(f'<a href="{link}">{esc(label)}</a>' for link, label in crumbs)
    return "\n".join(
        [
            f"<!doctype html><html lang=en><head><meta charset=utf-8>{CSP_META}",
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{esc(title)}</title><style>{_CSS}</style></head><body>",
            f'<nav><a href="/">runs</a>{" / " + trail if trail else ""}</nav>',
            f"<h1>{esc(title)}</h1>",
            *body,
            "</body></html>",
        ]
    )


def table(table_id: str, header: list[str], rows: Iterable[list[str]]) -> str:
    """A table whose cells are HTML already (escape what goes in them)."""
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return (
        f'<div class="scroll"><table id="{table_id}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table></div>"
    )


def block(text: str, cap: int = TEXT_CAP) -> str:
    """``text`` in a ``<pre>``, its first ``cap`` characters, saying what was left out."""
    if len(text) <= cap:
        return f"<pre>{esc(text)}</pre>"
    cut = f'<p class="muted">first {cap:,} of {counted(len(text), "character")} shown</p>'
    return f"<pre>{esc(text[:cap])}</pre>{cut}"


def read_tail(path: Path, cap: int = TEXT_CAP) -> str | None:
    """A kept file's last ``cap`` bytes as text (where a log's story ends); ``None``: no file."""
    try:
        with path.open("rb") as f:
            size = f.seek(0, 2)
            f.seek(max(0, size - cap))
            data = f.read(cap)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    text = data.decode("utf-8", errors="replace")
    return text if size <= cap else f"[… first {counted(size - cap, 'byte')} not shown]\n{text}"
