"""OpenAI chat-completions message lists.

Accepted shapes, each list of messages being one session:

* a bare list of messages ``[{role, content, ...}, ...]``;
* an object ``{"messages": [...], ...}`` (other keys: ``id``/``session_id``/
  ``conversation_id``, ``title``, ``model`` and anything else, kept in metadata);
* a list of such lists or objects;
* tau-bench results ``{task_id, reward, info, traj: [...], trial}`` (or a list of them);
* JSON Lines with one ``{"messages": [...]}`` object per line (the fine-tuning format).

Choices:

* **Roles.** ``developer`` becomes ``system`` (``metadata["source_role"]``), legacy
  ``function`` and Llama's ``ipython`` become ``tool``; a message of any other role is
  skipped and counted (format drift, see ``_drift``).
* **Tool calls.** Each entry of an assistant's ``tool_calls`` becomes its own assistant
  message (``tool_name``, ``tool_call_id`` = the call id, content = a readable rendering of
  the ``arguments`` JSON string); text the assistant said alongside comes first as a plain
  assistant message. ``tool`` messages link by ``tool_call_id`` and get the tool name from
  the call when they lack ``name``. A call id used twice in one conversation (tau-bench
  does this) becomes ``<id>#2`` for the second call and its result, the original kept in
  ``metadata["source_tool_call_id"]``. Legacy ``function_call`` / ``function`` pairs get a
  synthetic call id ``<message index>#call`` so they stay linked.
* **Content** may be a string, null or a list of parts: text parts are joined with
  newlines, other parts become placeholders ("[image]", "[audio]", "[document: name]").
  A ``refusal`` is used as content when there is no other content.
* **Ids.** Client id = the message's ``id`` when it has one, else its index in the list;
  tool-call messages use the call id. Session ``external_id`` = ``id``/``session_id``/
  ``conversation_id``, or ``task-<task_id>[-trial-<trial>]`` for tau-bench, else "".
* **Times.** Chat-completions messages have none; a ``timestamp``/``created_at``/
  ``created`` on a message is used when present.
"""

from __future__ import annotations

from typing import Any

from .._common import ensure_unique_client_ids, parse_timestamp, time_bounds
from .._drift import skip
from .._flavour import message_flavour
from .._json import expect, get_str, iter_json_lines, loads_json
from .._render import render_arguments, render_blocks, tool_call_message, tool_result_message
from .._text import decode_text, require_text
from ..base import ImportFormatError, ParsedMessage, ParsedSession
from ..format import Format, Recognition
from ..sample import Sample

NAME = "openai_chat"

_ROLE_MAP = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "assistant": "assistant",
    "tool": "tool",
    "function": "tool",
    "ipython": "tool",
}
_ID_KEYS = ("id", "session_id", "conversation_id")
_TIME_KEYS = ("timestamp", "created_at", "created", "create_time")
_LIST_KEYS = ("messages", "traj")


def _content(message: dict[str, Any], where: str) -> str:
    content = message.get("content")
    expect(
        content,
        str | list | None,
        "'content' must be a string, null or a list of parts",
        field=f"{where}.content",
    )
    text = render_blocks(content)
    if not text and isinstance(message.get("refusal"), str):
        return message["refusal"]
    return text


def _timestamp(message: dict[str, Any], where: str) -> Any:
    for key in _TIME_KEYS:
        if message.get(key) not in (None, ""):
            return parse_timestamp(message[key], field=f"{where}.{key}")
    return None


def _tool_calls(message: dict[str, Any], where: str, index: int) -> list[tuple[str, str, Any]]:
    """``(call id, name, arguments)`` for each call of an assistant message."""
    calls = message.get("tool_calls")
    found: list[tuple[str, str, Any]] = []
    if calls is not None:
        expect(calls, list, "'tool_calls' must be a list", field=f"{where}.tool_calls")
        for k, call in enumerate(calls):
            call_where = f"{where}.tool_calls[{k}]"
            expect(call, dict, "each tool call must be an object", field=call_where)
            function = call.get("function") if isinstance(call.get("function"), dict) else call
            name = get_str(function, "name", field=f"{call_where}.function.name")
            call_id = get_str(call, "id", field=f"{call_where}.id") or f"{index}#{k}"
            found.append((call_id, name, function.get("arguments")))
    legacy = message.get("function_call")
    if isinstance(legacy, dict):
        name = get_str(legacy, "name", field=f"{where}.function_call.name")
        found.append((f"{index}#call", name, legacy.get("arguments")))
    return found


def _messages(items: Any, where: str) -> list[ParsedMessage]:
    expect(items, list, "a conversation must be a list of messages", field=where)
    out: list[ParsedMessage] = []
    names: dict[str, str] = {}
    # Some producers reuse a call id within one conversation (tau-bench does); later uses
    # become "<id>#2", ... so every call/result pair stays unambiguous.
    uses: dict[str, int] = {}
    alias: dict[str, str] = {}
    pending_legacy: list[tuple[str, str]] = []  # (call id, name) of function_call calls
    for index, message in enumerate(items):
        at = f"{where}[{index}]"
        expect(message, dict, "each message must be an object", field=at)
        source_role = get_str(message, "role", field=f"{at}.role")
        role = _ROLE_MAP.get(source_role)
        if role is None:
            skip("role", source_role or "(none)")
            continue
        text = _content(message, at)
        when = _timestamp(message, at)
        client_id = get_str(message, "id", field=f"{at}.id") or str(index)
        name = get_str(message, "name", field=f"{at}.name")
        meta: dict[str, Any] = {"source_role": source_role} if source_role != role else {}
        if role == "assistant":
            calls = _tool_calls(message, at, index)
            if text or not calls:
                out.append(
                    ParsedMessage(
                        role="assistant",
                        content=text,
                        author=name,
                        timestamp=when,
                        client_id=client_id,
                        metadata=meta,
                    )
                )
            for raw_id, tool, arguments in calls:
                content, extra = render_arguments(tool, arguments)
                uses[raw_id] = uses.get(raw_id, 0) + 1
                call_id = raw_id if uses[raw_id] == 1 else f"{raw_id}#{uses[raw_id]}"
                alias[raw_id] = call_id
                names[call_id] = tool
                if raw_id.endswith("#call"):
                    pending_legacy.append((call_id, tool))
                call = tool_call_message(
                    tool,
                    content,
                    extra,
                    call_id=call_id,
                    client_id=call_id,
                    timestamp=when,
                    author=name,
                )
                if call_id != raw_id:
                    call.metadata["source_tool_call_id"] = raw_id
                out.append(call)
            continue
        if role == "tool":
            raw_id = get_str(message, "tool_call_id", field=f"{at}.tool_call_id")
            call_id = alias.get(raw_id, raw_id)
            if call_id != raw_id:
                meta["source_tool_call_id"] = raw_id
            if not call_id and pending_legacy:
                match = next((c for c in reversed(pending_legacy) if c[1] == name), None)
                if match is not None:
                    pending_legacy.remove(match)
                    call_id = match[0]
            tool = name or names.get(call_id, "")
            result = tool_result_message(
                tool, text, call_id=call_id, client_id=client_id, timestamp=when, metadata=meta
            )
            out.append(result)
            continue
        out.append(
            ParsedMessage(
                role=role,
                content=text,
                author=name,
                timestamp=when,
                client_id=client_id,
                metadata=meta,
            )
        )
    ensure_unique_client_ids(out)
    return out


def _session(item: Any, where: str) -> ParsedSession:
    if isinstance(item, list):
        messages = _messages(item, where)
        started, ended = time_bounds(messages)
        return ParsedSession(NAME, messages=messages, started_at=started, ended_at=ended)
    expect(
        item, dict, "expected a list of messages or an object with 'messages'", field=where or None
    )
    key = next((k for k in _LIST_KEYS if k in item), None)
    if key is None:
        raise ImportFormatError(
            "expected an object with a 'messages' (or tau-bench 'traj') list",
            field=where or None,
        )
    prefix = f"{where}." if where else ""
    messages = _messages(item[key], f"{prefix}{key}")
    external_id = next(
        (get_str(item, k, field=f"{prefix}{k}") for k in _ID_KEYS if item.get(k) is not None), ""
    )
    agent_name = get_str(item, "agent_name", field=f"{prefix}agent_name")
    if key == "traj" and "task_id" in item:
        external_id = external_id or f"task-{item['task_id']}"
        if item.get("trial") is not None:
            external_id += f"-trial-{item['trial']}"
        agent_name = agent_name or "tau-bench"
    model = item.get("model") if isinstance(item.get("model"), str) else ""
    if model:
        for message in messages:
            if message.role == "assistant" and not message.author:
                message.author = model
    skip = {key, "title", "agent_name", *_ID_KEYS}
    started, ended = time_bounds(messages)
    return ParsedSession(
        NAME,
        messages=messages,
        external_id=external_id,
        title=get_str(item, "title", field=f"{prefix}title"),
        agent_name=agent_name,
        started_at=started,
        ended_at=ended,
        metadata={k: v for k, v in item.items() if k not in skip},
    )


def _is_message(item: Any) -> bool:
    return isinstance(item, dict) and "role" in item and not any(k in item for k in _LIST_KEYS)


def _parse_jsonl(text: str) -> list[ParsedSession]:
    sessions = []
    for line, obj in iter_json_lines(text):
        try:
            sessions.append(_session(obj, ""))
        except ImportFormatError as exc:
            exc.line = exc.line or line
            raise ImportFormatError(exc.message, line=exc.line, field=exc.field) from None
    return sessions


def parse_openai_chat(data: bytes) -> list[ParsedSession]:
    """Parse chat-completions message lists (see the module docstring for the shapes)."""
    text = decode_text(data)
    require_text(text)
    try:
        document = loads_json(text)
    except ImportFormatError as exc:
        # "Extra data" after a complete first value: JSON Lines, one conversation a line.
        if text.lstrip().startswith("{") and "Extra data" in exc.message:
            return _parse_jsonl(text)
        raise
    if isinstance(document, dict):
        return [_session(document, "")]
    expect(document, list, "expected a list of messages or conversations")
    if not document:
        return []
    if all(_is_message(item) for item in document):
        return [_session(document, "")]
    return [_session(item, f"[{i}]") for i, item in enumerate(document)]


def _claims_record(obj: dict[str, Any]) -> int:
    return 20 if "traj" in obj or isinstance(obj.get("messages"), list) else 0


def _claims_document(sample: Sample) -> int:
    """A JSON list of messages is the chat-completions shape; one bare message is OpenAI's
    when its fields show it (else Anthropic's, which owns bare messages)."""
    document = sample.document
    if isinstance(document, list) and document:
        first = document[0]
        if isinstance(first, list):
            return 50
        if isinstance(first, dict) and sample.owner(first) in (NAME, "anthropic_session"):
            return 50
    if isinstance(document, dict) and sample.owner(document) == "anthropic_session":
        return 50 if message_flavour([document]) == NAME else 0
    return 0


def _claims_lines(sample: Sample) -> int:
    if NAME in sample.owners:
        return 10
    if "anthropic_session" in sample.owners and message_flavour(sample.records) == NAME:
        return 5  # bare messages, the last JSON Lines resort: see anthropic_session
    return 0


FORMAT = Format(
    name=NAME,
    position=5,
    description="OpenAI chat-completions messages JSON",
    documentation=("OpenAI chat-completions message lists"),
    parse=parse_openai_chat,
    recognition=Recognition(record=_claims_record, document=_claims_document, lines=_claims_lines),
    label="OpenAI chat messages",
)


__all__ = ["parse_openai_chat"]
