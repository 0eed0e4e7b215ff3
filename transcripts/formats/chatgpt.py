"""ChatGPT data export (``conversations.json``): a JSON list of conversations.

A conversation is ``{title, create_time, update_time, mapping, current_node,
conversation_id, id, ...}``; ``mapping`` is a tree ``{node_id: {id, message, parent,
children}}`` in which edits and regenerations make branches. A single conversation
object (not in a list) is accepted too.

Choices:

* **Thread.** The visible thread is the path from ``current_node`` up through ``parent``;
  without a ``current_node`` the most recently created leaf is used. Other branches are
  not imported.
* **Content.** ``text`` parts are joined with newlines; ``multimodal_text`` parts that
  are not strings are described (``[image]``, ``[audio]``, ``[file]``, an audio
  transcription's text); ``code`` gives its text (language in ``metadata["language"]``);
  ``execution_output``, ``tether_quote``, ``tether_browsing_display``, ``system_error``
  give their text; custom instructions (``user_editable_context``) become a ``system``
  message with ``metadata["injected"] = True``; reasoning (``thoughts``) goes to
  ``metadata["thoughts"]`` of the next assistant message; unknown content types without
  text are skipped. Empty messages (the hidden empty system nodes, the root) are skipped.
* **Tools.** An assistant message whose ``recipient`` is not ``"all"`` is a tool call:
  ``tool_name`` = the recipient, ``tool_call_id`` = the message id. A following ``tool``
  message (``author.name`` = the tool) is its result, linked to the latest call to that
  tool (else to the call right before it); a tool message without a call (a file browser
  quoting an upload) keeps ``tool_call_id`` "".
* **Metadata.** ``model_slug`` → ``metadata["model"]`` and ``author`` of assistant
  messages; session ``metadata["models"]``, ``default_model_slug``, ``gizmo_id``,
  ``conversation_template_id``, ``is_archived`` when present. ``create_time`` epoch
  floats become aware UTC datetimes.
* **Ids.** Client id = ``message.id`` (node id when missing); session ``external_id`` =
  ``conversation_id`` (else ``id``).
"""

from __future__ import annotations

from typing import Any

from .._common import distinct, ensure_unique_client_ids, parse_timestamp
from .._drift import skip
from .._json import expect, get_str, loads_json, tag
from .._text import decode_text, require_text
from ..base import ParsedMessage, ParsedSession
from ..format import Format, Recognition
from ..sample import Sample

NAME = "chatgpt"
AGENT_NAME = "chatgpt"

_SESSION_FIELDS = (
    "default_model_slug",
    "gizmo_id",
    "gizmo_type",
    "conversation_template_id",
    "is_archived",
)

_ROLES = {"user": "user", "assistant": "assistant", "system": "system", "tool": "tool"}


def _describe_part(part: dict[str, Any]) -> str:
    kind = tag(part, "content_type")
    if isinstance(part.get("text"), str):  # audio_transcription and other text parts
        return part["text"]
    if "image" in kind:
        return "[image]"
    if "audio" in kind or "video" in kind:
        return "[audio]"
    return f"[{kind}]" if kind else "[attachment]"


def _content(content: dict[str, Any], where: str) -> tuple[str, dict[str, Any]]:
    """``(text, metadata)`` for one message's ``content`` object."""
    kind = tag(content, "content_type")
    meta: dict[str, Any] = {}
    if kind in ("text", "multimodal_text") or "parts" in content:
        parts = content.get("parts") or []
        expect(parts, list, "'parts' must be a list", field=f"{where}.content.parts")
        texts = []
        for part in parts:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict):
                texts.append(_describe_part(part))
                if isinstance(part.get("asset_pointer"), str):
                    meta.setdefault("attachments", []).append(part["asset_pointer"])
        return "\n".join(t for t in texts if t), meta
    if kind == "code":
        if isinstance(content.get("language"), str) and content["language"] != "unknown":
            meta["language"] = content["language"]
        return get_str(content, "text", field=f"{where}.content.text"), meta
    if kind == "tether_quote":
        title = tag(content, "title") or tag(content, "url")
        text = get_str(content, "text", field=f"{where}.content.text")
        return (f"{title}\n{text}" if title else text), meta
    if kind == "tether_browsing_display":
        return get_str(content, "result", field=f"{where}.content.result"), meta
    if kind == "thoughts":
        thoughts = content.get("thoughts")
        lines = []
        for thought in thoughts if isinstance(thoughts, list) else []:
            if isinstance(thought, dict):
                lines += [
                    thought[k] for k in ("summary", "content") if isinstance(thought.get(k), str)
                ]
        return "", {"thoughts": "\n\n".join(lines)} if lines else {}
    if kind == "user_editable_context":
        fields = [content.get("user_profile"), content.get("user_instructions")]
        return "\n\n".join(f for f in fields if isinstance(f, str) and f), meta
    for key in ("text", "result", "content"):
        if isinstance(content.get(key), str):
            return content[key], meta
    return "", meta


def _created(node: dict[str, Any]) -> float:
    message = node.get("message")
    moment = message.get("create_time") if isinstance(message, dict) else None
    return float(moment) if isinstance(moment, int | float) else 0.0


def _thread(mapping: dict[str, Any], current: str, where: str) -> list[dict[str, Any]]:
    """The nodes from the root down to ``current``."""
    if not current or current not in mapping:
        # No current_node: the most recently created leaf is what the person last saw.
        candidates = [
            (key, node)
            for key, node in mapping.items()
            if isinstance(node, dict) and not node.get("children")
        ]
        if not candidates:
            return []
        current = max(candidates, key=lambda item: _created(item[1]))[0]
    path: list[dict[str, Any]] = []
    seen: set[str] = set()
    node_id: Any = current
    while isinstance(node_id, str) and node_id in mapping and node_id not in seen:
        seen.add(node_id)
        node = mapping[node_id]
        expect(
            node, dict, "each mapping entry must be an object", field=f"{where}.mapping.{node_id}"
        )
        path.append(node)
        node_id = node.get("parent")
    path.reverse()
    return path


def _conversation(conversation: Any, index: int) -> ParsedSession:
    where = f"[{index}]"
    expect(conversation, dict, "each conversation must be an object", field=where)
    mapping = conversation.get("mapping")
    expect(mapping, dict, "'mapping' must be an object of nodes", field=f"{where}.mapping")
    current = conversation.get("current_node")
    nodes = _thread(mapping, current if isinstance(current, str) else "", where)
    messages: list[ParsedMessage] = []
    calls: list[ParsedMessage] = []
    pending_thoughts: list[str] = []
    models: list[str] = []
    for node in nodes:
        message = node.get("message")
        if message is None:
            continue
        node_where = f"{where}.mapping.{node.get('id', '?')}.message"
        expect(message, dict, "'message' must be an object", field=node_where)
        author = message.get("author") if isinstance(message.get("author"), dict) else {}
        role = _ROLES.get(str(author.get("role")), "")
        if not role:
            # "critic" and other internal or new roles: counted, not part of the visible thread
            skip("author role", author.get("role") or "(none)")
            continue
        content = message.get("content")
        expect(content, dict, "'content' must be an object", field=f"{node_where}.content")
        text, meta = _content(content, node_where)
        if "thoughts" in meta:
            pending_thoughts.append(meta.pop("thoughts"))
            continue
        if not text.strip():
            continue  # empty system nodes, empty assistant stubs before a tool call
        kind = tag(content, "content_type")
        if kind == "user_editable_context":
            role = "system"
            meta["injected"] = True
        msg_meta = message.get("metadata") if isinstance(message.get("metadata"), dict) else {}
        model = msg_meta.get("model_slug") if isinstance(msg_meta.get("model_slug"), str) else ""
        if model:
            meta["model"] = model
            models.append(model)
        if kind not in ("text", "multimodal_text"):
            meta["content_type"] = kind
        client_id = get_str(message, "id", field=f"{node_where}.id") or str(node.get("id", ""))
        name = author.get("name") if isinstance(author.get("name"), str) else ""
        parsed = ParsedMessage(
            role=role,
            content=text,
            author=model if role == "assistant" else name or "",
            timestamp=parse_timestamp(
                message.get("create_time"), field=f"{node_where}.create_time"
            ),
            client_id=client_id,
            metadata=meta,
        )
        recipient = message.get("recipient")
        if role == "assistant":
            if pending_thoughts:
                meta["thoughts"] = "\n\n".join(pending_thoughts)
                pending_thoughts = []
            if isinstance(recipient, str) and recipient not in ("all", ""):
                parsed.tool_name = recipient
                parsed.tool_call_id = client_id
                calls.append(parsed)
        elif role == "tool":
            parsed.tool_name = name
            call = next((c for c in reversed(calls) if c.tool_name == name), None)
            if call is None:
                # A result naming another tool still answers a call made just before it.
                previous = next((m for m in reversed(messages) if m.role != "tool"), None)
                call = previous if any(previous is c for c in calls) else None
            if call is not None:
                parsed.tool_call_id = call.tool_call_id
                parsed.tool_name = parsed.tool_name or call.tool_name
        messages.append(parsed)
    ensure_unique_client_ids(messages)
    metadata: dict[str, Any] = {
        key: conversation[key] for key in _SESSION_FIELDS if conversation.get(key) is not None
    }
    if models:
        metadata["models"] = distinct(models)
    return ParsedSession(
        source_format=NAME,
        messages=messages,
        external_id=get_str(conversation, "conversation_id", field=f"{where}.conversation_id")
        or get_str(conversation, "id", field=f"{where}.id"),
        title=get_str(conversation, "title", field=f"{where}.title"),
        agent_name=AGENT_NAME,
        started_at=parse_timestamp(conversation.get("create_time"), field=f"{where}.create_time"),
        ended_at=parse_timestamp(conversation.get("update_time"), field=f"{where}.update_time"),
        metadata=metadata,
    )


def parse_chatgpt(data: bytes) -> list[ParsedSession]:
    """Parse a ChatGPT ``conversations.json`` export (one session per conversation)."""
    text = decode_text(data)
    require_text(text)
    document = loads_json(text, what="JSON in the ChatGPT export")
    if isinstance(document, dict):
        document = [document]
    expect(document, list, "a ChatGPT export is a list of conversations")
    return [_conversation(conversation, i) for i, conversation in enumerate(document)]


def _claims_record(obj: dict[str, Any]) -> int:
    conversation = "current_node" in obj or "conversation_id" in obj or "title" in obj
    return 30 if "mapping" in obj and conversation else 0


def _claims_document(sample: Sample) -> int:
    # An empty export says nothing by its content: its name does.
    return 50 if sample.document == [] and sample.name.endswith("conversations.json") else 0


def _claims_lines(sample: Sample) -> int:
    return 20 if NAME in sample.owners else 0


def _named_like(name: str) -> bool:
    return name == "conversations.json"


FORMAT = Format(
    name=NAME,
    position=4,
    description="ChatGPT export conversations.json",
    documentation=("a ChatGPT data export's `conversations.json`"),
    parse=parse_chatgpt,
    recognition=Recognition(
        record=_claims_record, document=_claims_document, lines=_claims_lines, filename=_named_like
    ),
    label="ChatGPT export",
)


__all__ = ["parse_chatgpt"]
