"""OpenAI Codex rollout JSONL (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``).

Each line is ``{timestamp, type, payload}`` with ``type`` one of ``session_meta``,
``turn_context``, ``response_item`` (OpenAI Responses API items: what the model saw and
said) and ``event_msg`` (UI events that repeat the conversation). Early rollouts (2025)
had no envelope: a first line with the session's ``id``/``timestamp`` and then bare
response items and ``{"record_type": "state"}`` lines; those are read too.

Choices:

* **User text** comes from ``event_msg/user_message`` (what the person typed). The
  ``response_item`` user messages that repeat such a text are dropped; the other ones are
  context Codex injects (AGENTS.md, ``<environment_context>``, ...) and become ``system``
  messages with ``metadata["injected"] = True``, as do ``developer`` messages. A rollout
  without ``user_message`` events (old versions) takes user text from the response
  items, and only the ones that look injected (``<tag>`` or "# AGENTS.md" openings) are
  marked ``system``.
* **Assistant text** comes from ``response_item`` assistant messages; an ``agent_message``
  event is used only when no response item has the same text (no duplicates).
* **Tools.** ``function_call`` / ``custom_tool_call`` / ``local_shell_call`` /
  ``web_search_call`` become assistant tool-call messages (``tool_call_id`` = ``call_id``;
  content = the command for shell/exec calls, the patch for ``apply_patch``, ``key:
  value`` lines otherwise; other input fields in ``metadata["input_extra"]``). Their
  ``*_output`` items become ``tool`` messages linked by ``call_id`` with the tool name
  looked up from the call; ``exec_command_end`` events add ``metadata["exit_code"]``.
  Older outputs wrapped as ``{"output": ..., "metadata": {"exit_code": ...}}`` are unwrapped.
* **Reasoning** is encrypted and dropped; a readable reasoning summary, when present, is
  kept in ``metadata["reasoning"]`` of the next assistant message.
* **Ids.** Client id = the item's own ``id`` when it has one, else ``call_id`` for calls
  and ``<call_id>:output`` for outputs, else ``L<line number>`` (rollouts are append-only,
  so line numbers are stable). Session ``external_id`` = ``session_meta.id``.
* **Metadata.** Session: ``session_id``, ``cwd``, ``originator``, ``cli_version``, ``source``,
  ``model_provider``, ``git`` (commit_hash, branch, repository_url), ``models``;
  assistant messages: ``model`` (from the current ``turn_context``). ``base_instructions``
  (the multi-kilobyte system prompt) is not kept. Title: the last ``thread_name_updated``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from .._common import distinct, ensure_unique_client_ids, parse_timestamp, time_bounds
from .._drift import skip
from .._json import expect, get_dict, get_str, iter_json_lines, loads_json, tag
from .._render import (
    dumps,
    format_command,
    render_arguments,
    render_blocks,
    tool_call_message,
    tool_result_message,
)
from .._text import decode_text, require_text
from ..base import ImportFormatError, ParsedMessage, ParsedSession
from ..format import Format, Recognition
from ..sample import Sample

NAME = "codex"
AGENT_NAME = "codex"

_ENVELOPE_TYPES = {"session_meta", "turn_context", "response_item", "event_msg", "compacted"}
_RESPONSE_ITEM_TYPES = {
    "message",
    "reasoning",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "local_shell_call",
    "local_shell_call_output",
    "web_search_call",
}
# Response items known to carry nothing to read (any other unknown item is counted as skipped).
_QUIET_ITEMS = {"ghost_snapshot", "compaction", "compaction_summary", "other"}
_CALL_TYPES = {"function_call", "custom_tool_call", "local_shell_call", "web_search_call"}
_OUTPUT_TYPES = {"function_call_output", "custom_tool_call_output", "local_shell_call_output"}
_INJECTED_OPENINGS = ("<", "# AGENTS.md", "# agents.md")
_SESSION_FIELDS = ("cwd", "originator", "cli_version", "source", "model_provider")


def _normalise(
    line: int, obj: dict[str, Any], first: bool
) -> tuple[str, dict[str, Any], Any] | None:
    """``(kind, payload, timestamp)`` for a line of either rollout generation, or None."""
    payload = obj.get("payload")
    kind = tag(obj)
    if kind in _ENVELOPE_TYPES:
        expect(
            payload, dict, f"a '{kind}' line needs a 'payload' object", line=line, field="payload"
        )
        return kind, payload, obj.get("timestamp")
    if "record_type" in obj:
        return None
    if kind in _RESPONSE_ITEM_TYPES:
        return "response_item", obj, obj.get("timestamp")
    if first and "id" in obj and "timestamp" in obj and "type" not in obj:
        return "session_meta", obj, obj.get("timestamp")
    return None


def _text_of(payload: dict[str, Any], line: int) -> str:
    """The text parts of a Responses API message (input_text / output_text / ...)."""
    content = payload.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    expect(
        content,
        list,
        "'content' must be a string or a list of parts",
        line=line,
        field="payload.content",
    )
    return render_blocks(content)


def _unwrap_output(output: Any) -> tuple[str, dict[str, Any]]:
    """Tool output text and any metadata Codex packed with it."""
    if isinstance(output, str):
        stripped = output.strip()
        if stripped.startswith("{") and '"output"' in stripped:
            try:
                parsed = loads_json(stripped)
            except ImportFormatError:
                return output, {}
            if isinstance(parsed, dict) and isinstance(parsed.get("output"), str):
                meta = parsed.get("metadata")
                return parsed["output"], dict(meta) if isinstance(meta, dict) else {}
        return output, {}
    if isinstance(output, dict):
        if isinstance(output.get("content"), str | list):
            return render_blocks(output["content"]), {}
        if isinstance(output.get("output"), str):
            return output["output"], {}
        return dumps(output), {}
    return render_blocks(output), {}


class _Rollout:
    def __init__(self) -> None:
        self.messages: list[ParsedMessage] = []
        self.meta: dict[str, Any] = {}
        self.models: list[str] = []
        self.model = ""
        self.title = ""
        self.started: datetime | None = None
        self.call_names: dict[str, str] = {}
        self.exit_codes: dict[str, Any] = {}
        self.reasoning: list[str] = []

    def emit(self, message: ParsedMessage) -> None:
        if message.role == "assistant":
            if self.model:
                message.metadata.setdefault("model", self.model)
                message.author = message.author or self.model
            if self.reasoning:
                message.metadata["reasoning"] = "\n\n".join(self.reasoning)
                self.reasoning = []
        self.messages.append(message)

    def session_meta(self, payload: dict[str, Any], line: int, timestamp: Any) -> None:
        if self.meta.get("id"):
            return  # a resumed/forked rollout repeats the original meta: keep the first
        self.meta["id"] = get_str(payload, "id", line=line, field="payload.id")
        for key in _SESSION_FIELDS:
            value = payload.get(key)
            if isinstance(value, str) and value:
                self.meta[key] = value
        git = payload.get("git")
        if isinstance(git, dict) and git:
            self.meta["git"] = git
        self.started = parse_timestamp(
            payload.get("timestamp") or timestamp, line=line, field="payload.timestamp"
        )

    def turn_context(self, payload: dict[str, Any]) -> None:
        model = payload.get("model")
        if isinstance(model, str) and model:
            self.model = model
            self.models.append(model)
        if isinstance(payload.get("cwd"), str) and "cwd" not in self.meta:
            self.meta["cwd"] = payload["cwd"]


def _client_id(payload: dict[str, Any], line: int) -> str:
    item_id = payload.get("id")
    return item_id if isinstance(item_id, str) and item_id else f"L{line}"


def _call_message(
    kind: str, payload: dict[str, Any], line: int, when: datetime | None
) -> ParsedMessage:
    call_id = get_str(payload, "call_id", line=line, field="payload.call_id")
    extra: dict[str, Any] = {}
    if kind == "local_shell_call":
        name = "local_shell"
        action = get_dict(payload, "action", line=line, field="payload.action")
        content = format_command(action.get("command", ""))
        extra = {k: v for k, v in action.items() if k not in ("command", "type")}
    elif kind == "web_search_call":
        name = "web_search"
        action = get_dict(payload, "action", line=line, field="payload.action")
        query = action.get("query")
        content = query if isinstance(query, str) else dumps(action) if action else ""
        call_id = call_id or get_str(payload, "id", line=line, field="payload.id")
    else:
        name = get_str(payload, "name", line=line, field="payload.name")
        raw = payload.get("arguments") if kind == "function_call" else payload.get("input")
        content, extra = render_arguments(name, raw)
    item_id = payload.get("id")
    client_id = item_id if isinstance(item_id, str) and item_id else call_id or f"L{line}"
    return tool_call_message(
        name, content, extra, call_id=call_id, client_id=client_id, timestamp=when
    )


def parse_codex(data: bytes) -> list[ParsedSession]:
    """Parse one Codex rollout file into one session."""
    text = decode_text(data)
    require_text(text)
    lines: list[tuple[int, str, dict[str, Any], datetime | None]] = []
    for line, obj in iter_json_lines(text):
        normal = _normalise(line, obj, first=not lines)
        if normal is None:
            if "record_type" not in obj:  # the old rollouts' state lines: known, nothing to read
                skip("record type", tag(obj) or "(none)")
            continue
        kind, payload, raw_time = normal
        lines.append((line, kind, payload, parse_timestamp(raw_time, line=line)))
    if not lines:
        raise ImportFormatError(
            "this does not look like a Codex rollout: no line is a session_meta, "
            "turn_context, response_item or event_msg record"
        )

    # First pass: what the UI events say, so the second pass can drop duplicates.
    typed: set[str] = set()
    said: set[str] = set()
    rollout = _Rollout()
    for line, kind, payload, _ in lines:
        item = tag(payload)
        if kind == "event_msg" and item == "user_message":
            typed.add(get_str(payload, "message", line=line, field="payload.message").strip())
        elif kind == "event_msg" and item == "exec_command_end":
            call_id = payload.get("call_id")
            if isinstance(call_id, str) and "exit_code" in payload:
                rollout.exit_codes[call_id] = payload["exit_code"]
        elif kind == "response_item" and item == "message" and tag(payload, "role") == "assistant":
            said.add(_text_of(payload, line).strip())
    has_user_events = bool(typed)

    for line, kind, payload, when in lines:
        item = tag(payload)
        if kind == "session_meta":
            rollout.session_meta(payload, line, when)
        elif kind == "turn_context":
            rollout.turn_context(payload)
        elif kind == "event_msg":
            _event(rollout, payload, line, when, said)
        elif kind == "response_item":
            if item == "message":
                _message(rollout, payload, line, when, typed, has_user_events)
            elif item == "reasoning":
                summary = payload.get("summary")
                for part in summary if isinstance(summary, list) else []:
                    if isinstance(part, dict) and isinstance(part.get("text"), str):
                        rollout.reasoning.append(part["text"])
            elif item in _CALL_TYPES:
                message = _call_message(item, payload, line, when)
                rollout.call_names[message.tool_call_id] = message.tool_name
                rollout.emit(message)
            elif item in _OUTPUT_TYPES:
                _output(rollout, payload, line, when)
            elif item not in _RESPONSE_ITEM_TYPES | _QUIET_ITEMS:
                skip("response item type", item or "(none)")

    messages = rollout.messages
    ensure_unique_client_ids(messages)
    first, last = time_bounds(messages)
    last_line_time = next((w for *_, w in reversed(lines) if w is not None), None)
    metadata = {("session_id" if k == "id" else k): v for k, v in rollout.meta.items()}
    if rollout.models:
        metadata["models"] = distinct(rollout.models)
    return [
        ParsedSession(
            source_format=NAME,
            messages=messages,
            external_id=rollout.meta.get("id", ""),
            title=rollout.title,
            agent_name=AGENT_NAME,
            started_at=rollout.started or first,
            ended_at=max(filter(None, [last, last_line_time]), default=None),
            metadata=metadata,
        )
    ]


def _event(
    rollout: _Rollout,
    payload: dict[str, Any],
    line: int,
    when: datetime | None,
    said: set[str],
) -> None:
    item = tag(payload)
    if item == "user_message":
        text = get_str(payload, "message", line=line, field="payload.message")
        images = payload.get("images")
        meta: dict[str, Any] = {}
        if isinstance(images, list) and images:
            text = "\n".join([text, *["[image]"] * len(images)]) if text else "[image]"
            meta["images"] = len(images)
        rollout.emit(
            ParsedMessage(
                role="user", content=text, timestamp=when, client_id=f"L{line}", metadata=meta
            )
        )
    elif item == "agent_message":
        text = get_str(payload, "message", line=line, field="payload.message")
        if text.strip() and text.strip() not in said:
            rollout.emit(
                ParsedMessage(role="assistant", content=text, timestamp=when, client_id=f"L{line}")
            )
    elif item == "thread_name_updated":
        name = payload.get("thread_name")
        if isinstance(name, str) and name:
            rollout.title = name


def _message(
    rollout: _Rollout,
    payload: dict[str, Any],
    line: int,
    when: datetime | None,
    typed: set[str],
    has_user_events: bool,
) -> None:
    role = tag(payload, "role")
    text = _text_of(payload, line)
    client_id = _client_id(payload, line)
    if role == "assistant":
        meta = {"phase": payload["phase"]} if isinstance(payload.get("phase"), str) else {}
        rollout.emit(
            ParsedMessage(
                role="assistant", content=text, timestamp=when, client_id=client_id, metadata=meta
            )
        )
        return
    if role == "user":
        if text.strip() in typed:
            return  # the user_message event already gave it
        injected = has_user_events or text.lstrip().startswith(_INJECTED_OPENINGS)
        if not injected:
            rollout.emit(
                ParsedMessage(role="user", content=text, timestamp=when, client_id=client_id)
            )
            return
    elif role not in ("developer", "system"):
        return
    meta = {"injected": True, "source_role": role}
    rollout.emit(
        ParsedMessage(
            role="system", content=text, timestamp=when, client_id=client_id, metadata=meta
        )
    )


def _output(rollout: _Rollout, payload: dict[str, Any], line: int, when: datetime | None) -> None:
    call_id = get_str(payload, "call_id", line=line, field="payload.call_id")
    content, packed = _unwrap_output(payload.get("output"))
    meta: dict[str, Any] = {}
    if "exit_code" in packed:
        meta["exit_code"] = packed["exit_code"]
    if call_id in rollout.exit_codes:
        meta["exit_code"] = rollout.exit_codes[call_id]
    if "duration_seconds" in packed:
        meta["duration_seconds"] = packed["duration_seconds"]
    name = rollout.call_names.get(call_id, "")
    client_id = f"{call_id}:output" if call_id else f"L{line}"
    rollout.emit(
        tool_result_message(
            name, content, call_id=call_id, client_id=client_id, timestamp=when, metadata=meta
        )
    )


_CODEX_TYPES = {"session_meta", "turn_context", "response_item", "event_msg"}
_CODEX_ITEMS = {"function_call", "function_call_output", "reasoning", "custom_tool_call"}


def _claims_record(obj: dict[str, Any]) -> int:
    kind = tag(obj)
    if kind in _CODEX_TYPES and isinstance(obj.get("payload"), dict):
        return 60
    if "record_type" in obj or ("instructions" in obj and "id" in obj and "timestamp" in obj):
        return 60
    if kind in _CODEX_ITEMS and "payload" not in obj:
        return 60  # early rollouts wrote bare Responses API items
    if kind == "message" and isinstance(obj.get("content"), list):
        parts = {tag(p) for p in obj["content"] if isinstance(p, dict)}
        if parts & {"input_text", "output_text"}:
            return 60
    return 0


def _claims_lines(sample: Sample) -> int:
    return 70 if NAME in sample.owners else 0  # first among the JSON Lines formats


def _named_like(name: str) -> bool:
    return name.startswith("rollout-") and name.endswith(".jsonl")


FORMAT = Format(
    name=NAME,
    position=2,
    description="Codex rollout JSONL",
    documentation=("OpenAI Codex rollout JSONL (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`)"),
    parse=parse_codex,
    recognition=Recognition(record=_claims_record, lines=_claims_lines, filename=_named_like),
    label="OpenAI Codex rollout",
)


__all__ = ["parse_codex"]
