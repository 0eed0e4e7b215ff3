"""Claude Managed Agents session event logs (Anthropic's hosted agents).

A session is a list of events, each ``{id, type, processed_at, ...}`` with ``type`` named
``{domain}.{action}``: ``user.message``, ``agent.message``, ``agent.thinking``,
``agent.tool_use``, ``agent.tool_result``, ``span.model_request_start/end``,
``session.status_*``, ... Accepted shapes:

* JSON Lines of exported events ``{role: user|agent|system, kind, time, content?, tool?,
  raw}``, ``raw`` being the API event (what exports of a session write);
* JSON Lines of bare API events, or a JSON list of them, or a page of
  ``GET /v1/sessions/{id}/events`` (``{"data": [...]}``).

Choices:

* **Messages.** ``user.message`` → user, ``agent.message`` → assistant (text blocks joined;
  images and documents as "[image]" / "[document]"); ``system.message`` → system.
* **Thinking** (``agent.thinking``, whose text only the export's ``content`` carries) goes to
  ``metadata["thinking"]`` of the agent's next message or tool call, as the other
  importers keep it.
* **Tool calls.** ``agent.tool_use`` / ``agent.mcp_tool_use`` / ``agent.custom_tool_use``
  are assistant tool-call messages (call id = the event ``id``, readable input, the MCP
  server and the permission judgement in metadata); ``agent.tool_result`` /
  ``agent.mcp_tool_result`` / ``user.custom_tool_result`` / ``user.tool_result`` are tool
  messages joined to their call by ``tool_use_id`` (``mcp_tool_use_id``,
  ``custom_tool_use_id``), with ``is_error``.
* **Spans and status** are session metadata: ``model_requests`` (how many) and ``usage``
  (token counts summed over ``span.model_request_end``), ``errors`` (``session.error``
  messages), ``stop_reason`` of the last idle; the last status sets the session's status
  (idle → completed, terminated → error, running/rescheduled → active). Interrupts and
  tool confirmations are counted in metadata. Any other event type is skipped and
  counted (format drift, see ``_drift``).
* **Times** are the event's ``processed_at`` (the export's ``time`` when it has none); the
  session runs from its first event to its last.
* **Ids.** Client id = the event id. ``external_id`` = a ``session_id`` the events carry,
  else the first event's id (stable, so a re-import extends rather than duplicates).
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime
from typing import Any

from .._common import ensure_unique_client_ids, parse_timestamp, time_bounds
from .._drift import skip
from .._json import expect, get_str, iter_json_lines, json_type, loads_json, tag
from .._render import render_blocks, render_tool_input, tool_call_message, tool_result_message
from .._text import decode_text, require_text
from ..base import ImportFormatError, ParsedMessage, ParsedSession
from ..format import Format, Recognition
from ..sample import Sample

NAME = "anthropic_managed_agent"
AGENT_NAME = "claude-managed-agent"
DOMAINS = ("user.", "agent.", "session.", "span.", "system.")

_SPEAKERS = {"user.message": "user", "agent.message": "assistant", "system.message": "system"}
_CALLS = {"agent.tool_use", "agent.mcp_tool_use", "agent.custom_tool_use"}
_RESULTS = {
    "agent.tool_result": "tool_use_id",
    "agent.mcp_tool_result": "mcp_tool_use_id",
    "user.custom_tool_result": "custom_tool_use_id",
    "user.tool_result": "tool_use_id",
}
_STATUSES = {
    "session.status_idle": "completed",
    "session.status_terminated": "error",
    "session.status_running": "active",
    "session.status_rescheduled": "active",
}
# Known events with nothing to read: bookkeeping of the stream, of outcome evaluations and of
# sub-agent threads (by prefix, so their new variants are known too).
_QUIET_PREFIXES = ("span.outcome_evaluation_", "session.thread_", "event_")
_QUIET = {
    "span.model_request_start",
    "session.updated",
    "session.deleted",
    "session.outcome_evaluated",
    "agent.thread_context_compacted",
}
_COUNTED = {"user.interrupt": "interrupts", "user.tool_confirmation": "tool_confirmations"}
_USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)


def is_event(obj: dict[str, Any]) -> bool:
    """Is ``obj`` a Managed Agents event, bare or wrapped by an export?"""
    raw = obj.get("raw") if isinstance(obj.get("raw"), dict) else obj
    kind = tag(raw)
    return kind.startswith(DOMAINS) and ("processed_at" in raw or "id" in raw)


class _Log:
    """Builds one session from its events, in order."""

    def __init__(self) -> None:
        self.messages: list[ParsedMessage] = []
        self.tool_names: dict[str, str] = {}
        self.thinking: list[str] = []
        self.usage: Counter[str] = Counter()
        self.counts: Counter[str] = Counter()
        self.errors: list[str] = []
        self.status = ""
        self.stop_reason = ""
        self.session_id = ""
        self.first_id = ""
        self.times: list[datetime] = []  # of every event: a session starts at its first

    def add(self, line: int, obj: dict[str, Any]) -> None:
        wrapped = isinstance(obj.get("raw"), dict)
        raw = obj["raw"] if wrapped else obj
        kind = tag(raw)
        event_id = get_str(raw, "id", line=line, field="raw.id" if wrapped else "id")
        self.first_id = self.first_id or event_id
        self.session_id = self.session_id or tag(raw, "session_id") or tag(obj, "session_id")
        stamp = raw.get("processed_at") or obj.get("time")
        when = parse_timestamp(stamp, line=line, field="processed_at")
        if when is not None:
            self.times.append(when)
        # The export's own text, for events whose API shape carries none (thinking).
        told = obj.get("content") if wrapped and isinstance(obj.get("content"), str) else ""
        if kind in _SPEAKERS:
            text = render_blocks(raw["content"]) if "content" in raw else told
            self._emit(ParsedMessage(_SPEAKERS[kind], text, "", when, client_id=event_id))
        elif kind == "agent.thinking":
            text = render_blocks(raw.get("thinking") or raw.get("content")) or told
            if text:
                self.thinking.append(text)
        elif kind in _CALLS:
            self._call(line, raw, kind, event_id, when, tag(obj, "tool"))
        elif kind in _RESULTS:
            self._result(raw, kind, event_id, when, told)
        elif kind == "span.model_request_end":
            self.counts["model_requests"] += 1
            usage = raw.get("model_usage") or raw.get("usage")
            for key in _USAGE_KEYS:
                value = usage.get(key) if isinstance(usage, dict) else None
                if isinstance(value, int) and not isinstance(value, bool):
                    self.usage[key] += value
        elif kind in _STATUSES:
            self.status = _STATUSES[kind]
            if kind == "session.status_idle" and isinstance(raw.get("stop_reason"), dict):
                self.stop_reason = tag(raw["stop_reason"])
        elif kind == "session.error":
            error = raw.get("error") if isinstance(raw.get("error"), dict) else {}
            message = tag(error, "message") or tag(error) or "error"
            self.errors.append(message)
        elif kind in _COUNTED:
            self.counts[_COUNTED[kind]] += 1
        elif kind not in _QUIET and not kind.startswith(_QUIET_PREFIXES):
            skip("event type", kind or "(none)")

    def _emit(self, message: ParsedMessage) -> None:
        if message.role == "assistant" and self.thinking:
            message.metadata["thinking"] = "\n\n".join(self.thinking)
            self.thinking = []
        self.messages.append(message)

    def _call(
        self,
        line: int,
        raw: dict[str, Any],
        kind: str,
        event_id: str,
        when: datetime | None,
        tool: str,
    ) -> None:
        name = get_str(raw, "name", line=line, field="name") or tool
        text, extra = render_tool_input(name, raw.get("input"))
        meta: dict[str, Any] = {}
        if kind != "agent.tool_use":
            meta["tool_kind"] = kind.removeprefix("agent.").removesuffix("_tool_use")
        for key in ("mcp_server_name", "evaluated_permission", "session_thread_id"):
            if isinstance(raw.get(key), str) and raw[key]:
                meta[key] = raw[key]
        self.tool_names[event_id] = name
        self._emit(
            tool_call_message(
                name,
                text,
                extra,
                call_id=event_id,
                client_id=event_id,
                timestamp=when,
                metadata=meta,
            )
        )

    def _result(
        self, raw: dict[str, Any], kind: str, event_id: str, when: datetime | None, told: str
    ) -> None:
        call_id = tag(raw, _RESULTS[kind])
        text = render_blocks(raw["content"]) if raw.get("content") is not None else told
        meta = {"is_error": raw["is_error"]} if isinstance(raw.get("is_error"), bool) else {}
        self._emit(
            tool_result_message(
                self.tool_names.get(call_id, ""),
                text,
                call_id=call_id if call_id in self.tool_names else "",
                client_id=event_id,
                timestamp=when,
                metadata=meta if call_id in self.tool_names else {**meta, "tool_use_id": call_id},
            )
        )

    def session(self) -> ParsedSession:
        if self.thinking:  # thoughts after the agent's last words: keep them on those
            last = next((m for m in reversed(self.messages) if m.role == "assistant"), None)
            if last is not None:
                earlier = last.metadata.get("thinking")
                last.metadata["thinking"] = "\n\n".join(filter(None, [earlier, *self.thinking]))
        ensure_unique_client_ids(self.messages)
        first, last_time = time_bounds(self.messages)
        if self.times:
            first, last_time = min(self.times), max(self.times)
        metadata: dict[str, Any] = dict(self.counts)
        if self.usage:
            metadata["usage"] = dict(self.usage)
        if self.errors:
            metadata["errors"] = self.errors
        if self.stop_reason:
            metadata["stop_reason"] = self.stop_reason
        return ParsedSession(
            source_format=NAME,
            messages=self.messages,
            external_id=self.session_id or self.first_id,
            agent_name=AGENT_NAME,
            status=self.status,
            started_at=first,
            ended_at=last_time,
            metadata=metadata,
        )


def _events(text: str) -> list[tuple[int, Any]]:
    """``(line, event)`` pairs of a JSON Lines log, a JSON list or an events page."""
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            page = json.loads(stripped)
        except (ValueError, RecursionError):
            page = None  # JSON Lines (or broken JSON, which the line reader locates)
        if not (isinstance(page, dict) and isinstance(page.get("data"), list)):
            return list(iter_json_lines(text))
    document = loads_json(text)
    if isinstance(document, dict):
        document = document.get("data")
    expect(document, list, "expected a list of session events", field="data")
    # Position in the list, counted from 1, stands for the line in errors.
    return [(index + 1, event) for index, event in enumerate(document)]


def parse_managed_agent(data: bytes) -> list[ParsedSession]:
    """Parse one Managed Agents session's event log into one session."""
    text = decode_text(data)
    require_text(text)
    log = _Log()
    seen = False
    for line, event in _events(text):
        if not isinstance(event, dict):
            raise ImportFormatError(
                f"each session event must be an object, got {json_type(event)}", line=line
            )
        if not is_event(event):
            skip("record", tag(event) or tag(event, "kind") or "(no type)")
            continue
        seen = True
        log.add(line, event)
    if not seen:
        raise ImportFormatError(
            "this does not look like a Managed Agents event log: no event has a "
            "'type' such as agent.message, user.message or session.status_idle"
        )
    return [log.session()]


def _claims_record(obj: dict[str, Any]) -> int:
    """The first claim: an event, or a page of the API's events (``{"data": [...]}``)."""
    events = obj.get("data")
    page = (
        isinstance(events, list)
        and events
        and all(isinstance(e, dict) and is_event(e) for e in events[:5])
    )
    return 90 if is_event(obj) or page else 0


def _claims_lines(sample: Sample) -> int:
    return 40 if NAME in sample.owners else 0


FORMAT = Format(
    name=NAME,
    position=7,
    description="Claude Managed Agents session event log (JSONL or JSON)",
    documentation=(
        "a Claude Managed Agents session's event log: JSON Lines of exported events `{role, "
        "kind, time, content, tool, raw}` (`raw` the API event), or the API's own events (`GET "
        '/v1/sessions/{id}/events`) as JSON Lines, a JSON list or a page `{"data": […]}`. '
        "`agent` speaks as the assistant, thinking is kept on the next message, "
        "`agent.tool_use` and `agent.tool_result` (also MCP and custom tools) are joined by the"
        " event id; model-request spans and status events become session metadata (`usage`, "
        "`model_requests`, `errors`, `stop_reason`, the status)"
    ),
    parse=parse_managed_agent,
    recognition=Recognition(record=_claims_record, lines=_claims_lines),
    label="Claude Managed Agents event log",
)


__all__ = ["is_event", "parse_managed_agent"]
