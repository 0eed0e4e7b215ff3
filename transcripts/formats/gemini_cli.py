"""Gemini CLI sessions (``~/.gemini/tmp/<project hash>/...``).

Accepted shapes, as gemini-cli writes them (``packages/core/src/services/chatRecording*.ts``):

* a chat recording ``chats/session-<time>-<id>.json``: ``{sessionId, projectHash,
  startTime, lastUpdated, summary?, messages: [...]}``;
* its newer JSON Lines form ``chats/session-<time>-<id>.jsonl``: a first line of that
  metadata, then one message record per line (a record repeating an ``id`` replaces the
  earlier one), ``{"$set": {...}}`` metadata updates and ``{"$rewindTo": id}`` (that
  message and everything after it were rewound away);
* a checkpoint ``checkpoint-<tag>.json`` (``/chat save``): the Gemini API history, a list
  of ``{role: user|model, parts: [...]}`` (or ``{history: [...]}``).

Choices:

* **Messages.** ``user`` → user, ``gemini`` → assistant, ``info``/``warning``/``error``
  notices → system (``metadata["notice"]`` their type); any other type is skipped and
  counted (``_drift``). ``content`` is a string or a list of parts: text parts joined,
  others as placeholders ("[image]"). ``thoughts`` (``subject`` and ``description``) go to
  ``metadata["thinking"]`` of the message, ``model`` to ``metadata["model"]``; token counts
  are summed into session ``metadata["usage"]``.
* **Tool calls.** Each of a message's ``toolCalls`` becomes an assistant tool-call message
  (its ``id`` the call id, readable ``args``) and a tool message with its result: the
  ``functionResponse`` output (or error) and any text parts, else ``resultDisplay``;
  ``status`` in metadata, ``is_error`` when it is ``error``/``cancelled``. In checkpoints,
  ``functionCall`` / ``functionResponse`` parts are joined by ``id``, or by name in order.
* **Ids.** Client id = the record's ``id`` (``<call id>`` / ``<call id>:result`` for tool
  calls, ``C<index>`` in checkpoints). ``external_id`` = ``sessionId``; ``summary`` is the
  title; ``projectHash`` and ``directories`` go to metadata.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any

from .._common import distinct, ensure_unique_client_ids, parse_timestamp, time_bounds
from .._drift import skip
from .._json import expect, get_str, iter_json_lines, loads_json, tag
from .._render import (
    describe_block,
    dumps,
    render_tool_input,
    tool_call_message,
    tool_result_message,
)
from .._text import decode_text, require_text
from ..base import ImportFormatError, ParsedMessage, ParsedSession
from ..format import Format, Recognition
from ..sample import Sample

NAME = "gemini_cli"
AGENT_NAME = "gemini-cli"
_NOTICES = {"info", "warning", "error"}
_FAILED = {"error", "cancelled"}
_USAGE = {
    "input": "input_tokens",
    "output": "output_tokens",
    "cached": "cached_tokens",
    "thoughts": "thought_tokens",
    "tool": "tool_tokens",
    "total": "total_tokens",
}


def is_chat_record(obj: dict[str, Any]) -> bool:
    """A chat recording (its metadata line, or the whole JSON document)."""
    return isinstance(obj.get("sessionId"), str) and (
        "projectHash" in obj or "startTime" in obj or isinstance(obj.get("messages"), list)
    )


def is_checkpoint_entry(obj: dict[str, Any]) -> bool:
    """One ``Content`` of the Gemini API history a checkpoint holds."""
    return tag(obj, "role") in ("user", "model") and isinstance(obj.get("parts"), list)


def _part_text(part: Any) -> str:
    if isinstance(part, str):
        return part
    if not isinstance(part, dict):
        return ""
    if isinstance(part.get("text"), str):
        return part["text"]
    if isinstance(part.get("inlineData"), dict) or isinstance(part.get("fileData"), dict):
        data = part.get("inlineData") or part.get("fileData")
        mime = tag(data, "mimeType")
        return (
            "[image]"
            if mime.startswith("image/")
            else f"[document: {mime}]"
            if mime
            else "[document]"
        )
    if "functionResponse" in part:
        return _response_text(part["functionResponse"])
    return describe_block(part)


def _content_text(content: Any) -> str:
    """A ``PartListUnion``: a string, one part or a list of them."""
    if content is None:
        return ""
    if isinstance(content, list):
        return "\n".join(t for t in (_part_text(p) for p in content) if t)
    return _part_text(content)


def _response_text(response: Any) -> str:
    body = response.get("response") if isinstance(response, dict) else None
    if isinstance(body, dict):
        for key in ("output", "error", "content"):
            if isinstance(body.get(key), str):
                return body[key]
        return dumps(body)
    return _content_text(body)


def _thinking(thoughts: Any) -> str:
    lines = []
    for thought in thoughts if isinstance(thoughts, list) else []:
        if isinstance(thought, dict):
            subject, description = tag(thought, "subject"), tag(thought, "description")
            lines.append(f"**{subject}** {description}".strip() if subject else description)
    return "\n\n".join(line for line in lines if line)


class _Chat:
    """Messages of a chat recording."""

    def __init__(self) -> None:
        self.messages: list[ParsedMessage] = []
        self.usage: Counter[str] = Counter()
        self.models: list[str] = []

    def add(self, record: dict[str, Any], where: str) -> None:
        kind = tag(record)
        record_id = get_str(record, "id", field=f"{where}.id")
        when = parse_timestamp(record.get("timestamp"), field=f"{where}.timestamp")
        text = _content_text(record.get("content"))
        if kind == "user" or kind in _NOTICES:
            role = "user" if kind == "user" else "system"
            meta = {"notice": kind} if kind in _NOTICES else {}
            self.messages.append(
                ParsedMessage(role, text, "", when, client_id=record_id, metadata=meta)
            )
            return
        if kind != "gemini":
            skip("message type", kind or "(none)")
            return
        meta: dict[str, Any] = {}
        thinking = _thinking(record.get("thoughts"))
        if thinking:
            meta["thinking"] = thinking
        model = tag(record, "model")
        if model:
            meta["model"] = model
            self.models.append(model)
        tokens = record.get("tokens")
        for key, name in _USAGE.items():
            value = tokens.get(key) if isinstance(tokens, dict) else None
            if isinstance(value, int) and not isinstance(value, bool):
                self.usage[name] += value
        calls = record.get("toolCalls")
        expect(calls, list | None, "'toolCalls' must be a list", field=f"{where}.toolCalls")
        if text or not calls:
            self.messages.append(
                ParsedMessage("assistant", text, "", when, client_id=record_id, metadata=meta)
            )
            meta = {}
        for k, call in enumerate(calls or []):
            expect(call, dict, "each tool call must be an object", field=f"{where}.toolCalls[{k}]")
            self._tool_call(call, f"{where}.toolCalls[{k}]", when, meta if k == 0 else {})

    def _tool_call(
        self, call: dict[str, Any], where: str, when: datetime | None, meta: dict[str, Any]
    ) -> None:
        name = get_str(call, "name", field=f"{where}.name")
        call_id = get_str(call, "id", field=f"{where}.id")
        at = parse_timestamp(call.get("timestamp"), field=f"{where}.timestamp") or when
        text, extra = render_tool_input(name, call.get("args"))
        for key in ("displayName", "description"):
            if isinstance(call.get(key), str) and call[key]:
                meta = {**meta, key: call[key]}
        self.messages.append(
            tool_call_message(
                name, text, extra, call_id=call_id, client_id=call_id, timestamp=at, metadata=meta
            )
        )
        result = _content_text(call.get("result"))
        if not result and isinstance(call.get("resultDisplay"), str):
            result = call["resultDisplay"]
        status = tag(call, "status")
        result_meta: dict[str, Any] = {"status": status} if status else {}
        if status in _FAILED:
            result_meta["is_error"] = True
        if result or status:
            self.messages.append(
                tool_result_message(
                    name,
                    result,
                    call_id=call_id,
                    client_id=f"{call_id}:result",
                    timestamp=at,
                    metadata=result_meta,
                )
            )


def _session(meta: dict[str, Any], chat: _Chat) -> ParsedSession:
    messages = chat.messages
    ensure_unique_client_ids(messages)
    first, last = time_bounds(messages)
    metadata: dict[str, Any] = {}
    for key, name in (("projectHash", "project_hash"), ("kind", "kind")):
        if isinstance(meta.get(key), str) and meta[key]:
            metadata[name] = meta[key]
    if isinstance(meta.get("directories"), list):
        metadata["directories"] = [d for d in meta["directories"] if isinstance(d, str)]
    if chat.models:
        metadata["models"] = distinct(chat.models)
    if chat.usage:
        metadata["usage"] = dict(chat.usage)
    return ParsedSession(
        source_format=NAME,
        messages=messages,
        external_id=tag(meta, "sessionId"),
        title=tag(meta, "summary"),
        agent_name=AGENT_NAME,
        started_at=parse_timestamp(meta.get("startTime"), field="startTime") or first,
        ended_at=parse_timestamp(meta.get("lastUpdated"), field="lastUpdated") or last,
        metadata=metadata,
    )


def _recording(document: dict[str, Any]) -> ParsedSession:
    records = document.get("messages")
    expect(records, list | None, "'messages' must be a list", field="messages")
    chat = _Chat()
    for index, record in enumerate(records or []):
        expect(record, dict, "each message must be an object", field=f"messages[{index}]")
        chat.add(record, f"messages[{index}]")
    return _session(document, chat)


def _recording_lines(text: str) -> ParsedSession:
    meta: dict[str, Any] = {}
    records: dict[str, tuple[int, dict[str, Any]]] = {}  # by id, in first-written order
    for line, obj in iter_json_lines(text):
        if isinstance(obj.get("$rewindTo"), str):
            rewound = obj["$rewindTo"]
            ids = list(records)
            cut = ids.index(rewound) if rewound in ids else 0
            records = {k: records[k] for k in ids[:cut]}
        elif isinstance(obj.get("$set"), dict):
            meta.update(obj["$set"])
        elif isinstance(obj.get("id"), str):
            records[obj["id"]] = (line, obj)
        elif is_chat_record(obj):
            meta.update(obj)
        else:
            skip("record", tag(obj) or "(no id)")
    chat = _Chat()
    for line, record in records.values():
        try:
            chat.add(record, "message")
        except ImportFormatError as exc:
            raise ImportFormatError(exc.message, line=line, field=exc.field) from None
    return _session(meta, chat)


def _checkpoint(history: list[Any]) -> ParsedSession:
    messages: list[ParsedMessage] = []
    pending: dict[str, list[str]] = {}  # tool name → call ids not answered yet
    for index, content in enumerate(history):
        where = f"[{index}]"
        expect(content, dict, "each history entry must be an object", field=where)
        role = tag(content, "role")
        if role not in ("user", "model"):
            skip("role", role or "(none)")
            continue
        texts, thoughts = [], []
        produced: list[ParsedMessage] = []
        for k, part in enumerate(content.get("parts") or []):
            if isinstance(part, dict) and isinstance(part.get("functionCall"), dict):
                call = part["functionCall"]
                name = get_str(call, "name", field=f"{where}.parts[{k}].functionCall.name")
                call_id = tag(call, "id") or f"C{index}.{k}"
                pending.setdefault(name, []).append(call_id)
                text, extra = render_tool_input(name, call.get("args"))
                produced.append(
                    tool_call_message(
                        name, text, extra, call_id=call_id, client_id=call_id, timestamp=None
                    )
                )
            elif isinstance(part, dict) and isinstance(part.get("functionResponse"), dict):
                response = part["functionResponse"]
                name = tag(response, "name")
                waiting = pending.get(name) or [""]
                call_id = tag(response, "id") or waiting[0]
                if call_id in waiting:
                    waiting.remove(call_id)
                produced.append(
                    tool_result_message(
                        name,
                        _response_text(response),
                        call_id=call_id,
                        client_id=f"{call_id}:result" if call_id else "",
                        timestamp=None,
                    )
                )
            elif isinstance(part, dict) and part.get("thought") is True:
                thoughts.append(_part_text(part))
            else:
                texts.append(_part_text(part))
        text = "\n".join(t for t in texts if t)
        speaker = "user" if role == "user" else "assistant"
        if text:
            produced.insert(0, ParsedMessage(speaker, text, ""))
        if thoughts and produced and produced[0].role == "assistant":
            produced[0].metadata["thinking"] = "\n\n".join(thoughts)
        for n, message in enumerate(produced):
            message.client_id = message.client_id or (f"C{index}" if n == 0 else f"C{index}#{n}")
        messages += produced
    ensure_unique_client_ids(messages)
    return ParsedSession(
        source_format=NAME,
        messages=messages,
        agent_name=AGENT_NAME,
        metadata={"checkpoint": True},
    )


def parse_gemini_cli(data: bytes) -> list[ParsedSession]:
    """Parse a Gemini CLI chat recording (JSON or JSONL) or checkpoint into one session."""
    text = decode_text(data)
    require_text(text)
    stripped = text.lstrip()
    if stripped.startswith("{") and "\n{" in stripped.rstrip():
        return [_recording_lines(text)]
    document = loads_json(text)
    if isinstance(document, dict) and isinstance(document.get("history"), list):
        document = document["history"]
    if isinstance(document, list):
        return [_checkpoint(document)]
    expect(document, dict, "a Gemini CLI session must be a JSON object or list")
    if not is_chat_record(document):
        raise ImportFormatError(
            "this does not look like a Gemini CLI session: it has no 'sessionId' and "
            "'projectHash' (a chat recording) and is not a list of {role, parts} (a checkpoint)"
        )
    return [_recording(document)]


def _claims_record(obj: dict[str, Any]) -> int:
    # Above Claude Code's claim: Gemini's records carry a 'sessionId' too.
    gemini = is_chat_record(obj) or is_checkpoint_entry(obj)
    return 80 if gemini or (tag(obj) == "gemini" and "content" in obj) else 0


def _claims_lines(sample: Sample) -> int:
    return 60 if NAME in sample.owners else 0


FORMAT = Format(
    name=NAME,
    position=12,
    description="Gemini CLI chat recording (chats/session-*.json/.jsonl) or checkpoint",
    documentation=(
        "Gemini CLI sessions from `~/.gemini/tmp/<project hash>/`: chat recordings "
        "`chats/session-*.json` and `.jsonl` (rewinds and metadata updates applied) and `/chat "
        "save` checkpoints (`checkpoint-*.json`); thoughts, tool calls with their results, "
        "models and token counts. The `logs.json` beside `chats/` holds the prompts alone and "
        "is left out when a folder is imported"
    ),
    parse=parse_gemini_cli,
    recognition=Recognition(record=_claims_record, lines=_claims_lines),
    label="Gemini CLI session",
)


__all__ = ["is_chat_record", "is_checkpoint_entry", "parse_gemini_cli"]
