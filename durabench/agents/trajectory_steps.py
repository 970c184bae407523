"""Steps of a transcript, one reader per dialect: what the agent said, ran and saw.

The dialects' quirks are the parsers' (``*_transcript.py``); these readers reuse their
helpers so a turn the classifier calls an API error is a system step here too.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from typing import Any, Literal

from durabench.agents.atif import Metrics, Observation, ObservationResult, Step, ToolCall
from durabench.agents.claude_transcript import _is_api_error, _retry_text, _with_codes
from durabench.agents.codex_transcript import _error_message
from durabench.agents.numbers import count

__all__ = ["StepBook", "claude_steps", "codex_steps", "gemini_steps"]

Source = Literal["system", "user", "agent"]


def _text(value: object) -> str:
    """Tool output as text: strings as they are, content blocks' texts joined, else JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(p, dict) for p in value):
        texts = [str(p["text"]) for p in value if p.get("type") == "text" and "text" in p]
        if len(texts) == len(value):
            return "\n".join(texts)
    return json.dumps(value, ensure_ascii=False)


def _when(event: dict[str, Any]) -> str | None:
    stamp = event.get("timestamp")
    if not isinstance(stamp, str):
        return None
    try:
        datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return stamp


class StepBook:
    """Steps in order; a tool's result goes to the step whose call it answers."""

    def __init__(self) -> None:
        self.steps: list[Step] = []
        self._by_call: dict[str, Step] = {}
        self.agent_said: set[str] = set()
        """Messages of the agent's steps as added (a final answer printed twice is one)."""

    def add(self, source: Source, message: str, event: dict[str, Any], **fields: Any) -> Step:
        """A new step, numbered after the last."""
        step = Step(
            step_id=len(self.steps) + 1,
            source=source,
            message=message,
            timestamp=_when(event),
            **fields,
        )
        self.steps.append(step)
        if source == "agent":
            self.agent_said.add(message)
        return step

    def call(self, step: Step, call_id: str, name: str, arguments: object) -> None:
        """Record a tool call on an agent step."""
        args = arguments if isinstance(arguments, dict) else {"input": arguments}
        step.tool_calls = [
            *(step.tool_calls or []),
            ToolCall(tool_call_id=call_id, function_name=name, arguments=args),
        ]
        self._by_call[call_id] = step

    def observe(self, call_id: str | None, content: str, event: dict[str, Any]) -> None:
        """A tool's result on its call's step (a result of no known call: a system step)."""
        step = self._by_call.get(call_id or "")
        if step is None:
            self.add("system", content, event)
            return
        step.observation = step.observation or Observation()
        step.observation.results.append(ObservationResult(source_call_id=call_id, content=content))

    def last_agent(self) -> Step | None:
        """The latest step, when the agent made it and nothing answered it yet."""
        last = self.steps[-1] if self.steps else None
        return last if last is not None and last.source == "agent" else None


def _claude_metrics(usage: object) -> Metrics | None:
    if not isinstance(usage, dict):
        return None
    cached = count(usage, "cache_read_input_tokens")
    fresh = count(usage, "input_tokens") + count(usage, "cache_creation_input_tokens")
    return Metrics(
        prompt_tokens=fresh + cached,
        completion_tokens=count(usage, "output_tokens"),
        cached_tokens=cached,
    )


def _claude_assistant(book: StepBook, event: dict[str, Any], message: dict[str, Any]) -> None:
    parts = message.get("content")
    parts = parts if isinstance(parts, list) else [{"type": "text", "text": str(parts or "")}]
    mark = {"message_id": message["id"]} if message.get("id") is not None else None
    last = book.last_agent()  # Claude Code prints one event per block of a message
    step = last if last is not None and mark is not None and last.extra == mark else None
    if step is None:
        step = book.add(
            "agent",
            "",
            event,
            model_name=str(message["model"]) if message.get("model") else None,
            metrics=_claude_metrics(message.get("usage")),
            extra=mark,
        )
    for part in (p for p in parts if isinstance(p, dict)):
        kind = part.get("type")
        if kind == "text" and str(part.get("text", "")).strip():
            step.message = "\n".join(t for t in (step.message, str(part["text"])) if t)
        elif kind == "thinking" and part.get("thinking"):
            step.reasoning_content = "\n".join(
                t for t in (step.reasoning_content or "", str(part["thinking"])) if t
            )
        elif kind == "tool_use":
            book.call(step, str(part.get("id")), str(part.get("name")), part.get("input"))


def _claude_result(book: StepBook, event: dict[str, Any]) -> None:
    said = str(event.get("result") or "")
    if event.get("is_error") or event.get("subtype") != "success":
        book.add("system", said or str(event.get("subtype") or "error"), event)
    elif said.strip() and said not in book.agent_said:
        book.add("agent", said, event)  # the final answer, when no turn printed it


def claude_steps(events: Iterable[dict[str, Any]]) -> list[Step]:
    """Steps of a Claude Code stream-json transcript."""
    book = StepBook()
    for event in events:
        kind, message = event.get("type"), event.get("message")
        if kind == "system" and event.get("subtype") == "api_retry":
            book.add("system", _retry_text(event), event)
        elif kind == "assistant" and isinstance(message, dict):
            if _is_api_error(event, message):
                book.add("system", _with_codes(_text(message.get("content")), event), event)
            else:
                _claude_assistant(book, event, message)
        elif kind == "user" and isinstance(message, dict):
            content = message.get("content")
            parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
            for part in (p for p in parts if isinstance(p, dict)):
                if part.get("type") == "tool_result":
                    said = _text(part.get("content"))
                    said = f"(error) {said}" if part.get("is_error") else said
                    book.observe(str(part.get("tool_use_id")), said, event)
                elif part.get("type") == "text" and part.get("text"):
                    book.add("user", str(part["text"]), event)
        elif kind == "result":
            _claude_result(book, event)
    return book.steps


def _codex_item(book: StepBook, event: dict[str, Any], item: dict[str, Any]) -> None:
    kind, call_id = str(item.get("type")), str(item.get("id"))
    if kind == "agent_message":
        book.add("agent", str(item.get("text", "")), event)
    elif kind == "reasoning":
        book.add("agent", "", event, reasoning_content=str(item.get("text", "")))
    elif kind == "error":
        book.add("system", str(item.get("message", "")), event)
    elif kind == "command_execution":
        step = book.add("agent", "", event)
        book.call(step, call_id, "command_execution", {"command": item.get("command")})
        code = item.get("exit_code")
        said = _text(item.get("aggregated_output"))
        book.observe(call_id, f"{said}\n(exit code {code})" if code else said, event)
    elif kind == "mcp_tool_call":
        step = book.add("agent", "", event)
        book.call(step, call_id, f"{item.get('server')}.{item.get('tool')}", item.get("arguments"))
        result = item.get("result")
        error = item.get("error")
        said = _text(result.get("content") if isinstance(result, dict) else result)
        book.observe(call_id, f"(error) {_text(error)}" if error else said, event)
    else:  # file changes, web searches, plans: the item is the call
        step = book.add("agent", "", event)
        args = {k: v for k, v in item.items() if k not in ("id", "type")}
        book.call(step, call_id, kind, args)


def codex_steps(events: Iterable[dict[str, Any]]) -> list[Step]:
    """Steps of a Codex ``exec --json`` transcript; a turn's tokens go to its last step."""
    book = StepBook()
    turn_start = 0
    for event in events:
        kind = event.get("type")
        if kind == "turn.started":
            turn_start = len(book.steps)
        elif kind == "item.completed" and isinstance(event.get("item"), dict):
            _codex_item(book, event, event["item"])
        elif kind == "turn.completed" and isinstance(event.get("usage"), dict):
            agent = [s for s in book.steps[turn_start:] if s.source == "agent"]
            usage = event["usage"]
            if agent:
                agent[-1].metrics = Metrics(
                    prompt_tokens=count(usage, "input_tokens"),
                    completion_tokens=count(usage, "output_tokens"),
                    cached_tokens=count(usage, "cached_input_tokens"),
                )
        elif kind in ("error", "turn.failed"):
            book.add("system", _error_message(event), event)
    return book.steps


def _error_text(error: object) -> str:
    return _text(error.get("message") if isinstance(error, dict) else error)


def gemini_steps(events: Iterable[dict[str, Any]]) -> list[Step]:
    """Steps of a Gemini CLI stream-json transcript; deltas of one answer are joined."""
    book = StepBook()
    for event in events:
        kind, role = event.get("type"), event.get("role")
        if kind == "message" and role == "user":
            book.add("user", str(event.get("content") or ""), event)
        elif kind == "message" and role == "assistant":
            text, last = str(event.get("content") or ""), book.last_agent()
            if event.get("delta") and last is not None and not last.tool_calls:
                last.message += text
            else:
                book.add("agent", text, event)
        elif kind == "tool_use":
            last = book.last_agent()
            step = last if last is not None and last.observation is None else None
            step = step or book.add("agent", "", event)
            call_id = str(event.get("tool_id"))
            book.call(step, call_id, str(event.get("tool_name")), event.get("parameters"))
        elif kind == "tool_result":
            said = _text(event.get("output"))
            if event.get("status") == "error":
                said = f"(error) {_error_text(event.get('error'))}"
            book.observe(str(event.get("tool_id")), said, event)
        elif kind == "error":
            book.add("system", str(event.get("message", "")), event)
        elif kind == "result" and event.get("status") == "error":
            book.add("system", _error_text(event.get("error")) or "error", event)
    return book.steps
