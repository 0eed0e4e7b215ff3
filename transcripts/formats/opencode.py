"""OpenCode sessions (sst/opencode), as ``opencode export <session>`` writes them.

Accepted shapes:

* an export ``{info: <session>, messages: [{info: <message>, parts: [<part>, ...]}]}``;
* the messages alone, ``[{info, parts}, ...]`` (what ``GET /session/{id}/message`` answers);
* one stored message ``{info, parts}``.

``info`` of the session: ``id`` (``ses_…``), ``title``, ``directory``, ``projectID``,
``version``, ``time {created, updated}`` (epoch milliseconds). A message's ``info``: ``id``,
``role`` (user/assistant), ``time {created, completed}``, ``modelID``, ``providerID``,
``agent``/``mode``, ``cost``, ``tokens {input, output, reasoning, cache {read, write}}``,
``error``.

Choices:

* **Parts.** ``text`` parts make the message's text (``synthetic`` ones, which OpenCode adds
  itself, are marked ``metadata["injected"]``); ``reasoning`` goes to
  ``metadata["thinking"]``; each ``tool`` part becomes an assistant tool-call message
  (call id = ``callID``, readable ``state.input``) and a tool message with
  ``state.output`` (or ``state.error``, ``is_error``), timed by ``state.time``;
  ``file`` parts are "[document: name]" / "[image]" in the text. ``step-start``,
  ``step-finish``, ``snapshot``, ``patch``, ``agent``, ``subtask``, ``retry`` and
  ``compaction`` are bookkeeping; any other part type is skipped and counted (``_drift``).
* **Metadata.** Models, cost and tokens are summed per session; the session's
  ``directory`` is ``cwd``.
* **Ids.** Client id = the message id (``<callID>`` / ``<callID>:result`` for tool calls);
  ``external_id`` = the session id.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any

from .._common import distinct, ensure_unique_client_ids, parse_timestamp, time_bounds
from .._drift import skip
from .._json import expect, get_dict, get_str, loads_json, tag
from .._render import render_tool_input, tool_call_message, tool_result_message
from .._text import decode_text, require_text
from ..base import ImportFormatError, ParsedMessage, ParsedSession
from ..format import Format, Recognition

NAME = "opencode"
AGENT_NAME = "opencode"
_QUIET_PARTS = {
    "step-start",
    "step-finish",
    "snapshot",
    "patch",
    "agent",
    "subtask",
    "retry",
    "compaction",
}
_ROLES = {"user": "user", "assistant": "assistant", "system": "system"}


def is_opencode_message(obj: dict[str, Any]) -> bool:
    """``{info: {id, role, ...}, parts: [...]}``: one OpenCode message with its parts."""
    info = obj.get("info")
    return isinstance(info, dict) and "role" in info and isinstance(obj.get("parts"), list)


def is_opencode_export(obj: dict[str, Any]) -> bool:
    info, messages = obj.get("info"), obj.get("messages")
    return (
        isinstance(info, dict)
        and isinstance(messages, list)
        and (
            tag(info, "id").startswith("ses")
            or any(isinstance(m, dict) and is_opencode_message(m) for m in messages[:3])
        )
    )


def _when(times: Any, key: str, where: str) -> datetime | None:
    value = times.get(key) if isinstance(times, dict) else None
    return parse_timestamp(value, field=f"{where}.time.{key}")


class _Session:
    def __init__(self) -> None:
        self.messages: list[ParsedMessage] = []
        self.models: list[str] = []
        self.tokens: Counter[str] = Counter()
        self.cost = 0.0
        self.errors: list[str] = []

    def add(self, entry: Any, where: str) -> None:
        expect(entry, dict, "each message must be an object", field=where)
        info = get_dict(entry, "info", field=f"{where}.info")
        role = _ROLES.get(tag(info, "role"))
        if role is None:
            skip("role", tag(info, "role") or "(none)")
            return
        message_id = get_str(info, "id", field=f"{where}.info.id")
        when = _when(info.get("time"), "created", f"{where}.info")
        self._account(info)
        parts = entry.get("parts")
        expect(parts, list, "'parts' must be a list", field=f"{where}.parts")
        meta: dict[str, Any] = {}
        for key in ("modelID", "agent", "mode"):
            if tag(info, key):
                meta[key.removesuffix("ID").lower()] = tag(info, key)
        texts: list[str] = []
        thinking: list[str] = []
        produced: list[ParsedMessage] = []

        def said() -> None:  # the text so far, as one message, before what follows it
            if texts:
                produced.append(
                    ParsedMessage(role, "\n".join(texts), "", when, metadata=dict(meta))
                )
                texts.clear()

        for k, part in enumerate(parts):
            expect(part, dict, "each part must be an object", field=f"{where}.parts[{k}]")
            kind = tag(part)
            if kind in ("text", "reasoning"):
                if isinstance(part.get("text"), str) and part["text"]:
                    (texts if kind == "text" else thinking).append(part["text"])
            elif kind == "tool":
                said()
                produced += self._tool(part, f"{where}.parts[{k}]", when)
            elif kind == "file":
                name = tag(part, "filename") or tag(part, "url")
                image = tag(part, "mime").startswith("image/")
                texts.append(
                    "[image]" if image else f"[document: {name}]" if name else "[document]"
                )
            elif kind not in _QUIET_PARTS:
                skip("part type", kind or "(none)")
        said()
        if not produced:
            produced.append(ParsedMessage(role, "", "", when, metadata=dict(meta)))
        if thinking:
            speaker = next((m for m in produced if m.role == "assistant"), produced[0])
            speaker.metadata["thinking"] = "\n\n".join(thinking)
        text_parts = [p for p in parts if tag(p) == "text"]
        if role == "user" and text_parts and all(p.get("synthetic") is True for p in text_parts):
            produced[0].metadata["injected"] = True  # OpenCode wrote it, not the person
        for n, message in enumerate(m for m in produced if not m.client_id):
            message.client_id = message_id if n == 0 else f"{message_id}#{n + 1}"
        self.messages += produced

    def _account(self, info: dict[str, Any]) -> None:
        if tag(info, "modelID"):
            self.models.append(tag(info, "modelID"))
        if isinstance(info.get("cost"), int | float) and not isinstance(info["cost"], bool):
            self.cost += info["cost"]
        tokens = info.get("tokens") if isinstance(info.get("tokens"), dict) else {}
        cache = tokens.get("cache") if isinstance(tokens.get("cache"), dict) else {}
        for name, value in [*tokens.items(), *((f"cache_{k}", v) for k, v in cache.items())]:
            if isinstance(value, int) and not isinstance(value, bool):
                self.tokens[name] += value
        error = info.get("error")
        if isinstance(error, dict):
            data = error.get("data") if isinstance(error.get("data"), dict) else {}
            self.errors.append(tag(data, "message") or tag(error, "name") or "error")

    def _tool(self, part: dict[str, Any], where: str, when: datetime | None) -> list[ParsedMessage]:
        name = get_str(part, "tool", field=f"{where}.tool")
        call_id = get_str(part, "callID", field=f"{where}.callID") or tag(part, "id")
        state = get_dict(part, "state", field=f"{where}.state")
        start = _when(state.get("time"), "start", f"{where}.state") or when
        end = _when(state.get("time"), "end", f"{where}.state") or start
        text, extra = render_tool_input(name, state.get("input"))
        meta = (
            {"title": state["title"]}
            if isinstance(state.get("title"), str) and state["title"]
            else {}
        )
        call = tool_call_message(
            name, text, extra, call_id=call_id, client_id=call_id, timestamp=start, metadata=meta
        )
        status = tag(state, "status")
        if status not in ("completed", "error"):
            return [call]  # pending/running: the call had no result when the file was written
        output = state.get("output") if status == "completed" else state.get("error")
        result_meta: dict[str, Any] = {"status": status}
        if status == "error":
            result_meta["is_error"] = True
        result = tool_result_message(
            name,
            output if isinstance(output, str) else "" if output is None else str(output),
            call_id=call_id,
            client_id=f"{call_id}:result",
            timestamp=end,
            metadata=result_meta,
        )
        return [call, result]

    def build(self, info: dict[str, Any]) -> ParsedSession:
        ensure_unique_client_ids(self.messages)
        first, last = time_bounds(self.messages)
        metadata: dict[str, Any] = {}
        for key, name in (
            ("directory", "cwd"),
            ("projectID", "project_id"),
            ("version", "version"),
            ("parentID", "parent_session_id"),
        ):
            if tag(info, key):
                metadata[name] = tag(info, key)
        if self.models:
            metadata["models"] = distinct(self.models)
        if self.tokens:
            metadata["tokens"] = dict(self.tokens)
        if self.cost:
            metadata["cost"] = round(self.cost, 6)
        if self.errors:
            metadata["errors"] = self.errors
        return ParsedSession(
            source_format=NAME,
            messages=self.messages,
            external_id=tag(info, "id"),
            title=tag(info, "title"),
            agent_name=AGENT_NAME,
            started_at=_when(info.get("time"), "created", "info") or first,
            ended_at=_when(info.get("time"), "updated", "info") or last,
            metadata=metadata,
        )


def parse_opencode(data: bytes) -> list[ParsedSession]:
    """Parse an OpenCode session export (or its messages) into one session."""
    text = decode_text(data)
    require_text(text)
    document = loads_json(text)
    if isinstance(document, dict) and is_opencode_message(document):
        document = [document]
    if isinstance(document, list):
        info: dict[str, Any] = {}
        entries = document
        first_info = entries[0].get("info") if entries and isinstance(entries[0], dict) else None
        if isinstance(first_info, dict) and tag(first_info, "sessionID"):
            info = {"id": tag(first_info, "sessionID")}
    elif isinstance(document, dict) and isinstance(document.get("messages"), list):
        info = get_dict(document, "info")
        entries = document["messages"]
    else:
        raise ImportFormatError(
            "this does not look like an OpenCode session: an export is {info, messages: "
            "[{info, parts}]} (`opencode export <session>`)"
        )
    session = _Session()
    for index, entry in enumerate(entries):
        session.add(entry, f"messages[{index}]")
    return [session.build(info)]


def _claims_record(obj: dict[str, Any]) -> int:
    return 70 if is_opencode_export(obj) or is_opencode_message(obj) else 0


FORMAT = Format(
    name=NAME,
    position=14,
    description="OpenCode session export (opencode export)",
    documentation=(
        "an OpenCode session, as `opencode export <session>` writes it (`{info, messages: "
        "[{info, parts}]}`, or the messages alone); reasoning, tool parts with their output or "
        "error and times, models, tokens and cost"
    ),
    parse=parse_opencode,
    recognition=Recognition(record=_claims_record),
    label="OpenCode session export",
)


__all__ = ["is_opencode_export", "is_opencode_message", "parse_opencode"]
