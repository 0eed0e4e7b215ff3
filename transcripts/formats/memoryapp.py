"""Our own session exports read back (``sessions/portable/session_export.py``): JSON, JSONL
and YAML.

* JSON and YAML: ``{"session": {...}, "messages": [...], <section>: ...}``.
* JSONL: a ``{"type": "session", ...}`` line, ``{"type": "message", ...}`` lines, and a
  ``{"type": "attachment", "name": <section>, "data": ...}`` line per section.

Everything the export wrote comes back: each message's role, author, content, tool name and
call id, time, metadata, kind and pin; the session's agent, persona, workflow, title,
person, status, times, topics, artifacts, metadata and source format. Sections beyond the
messages (``memories``) go to ``ParsedSession.attachments`` for the apps that wrote them.

Ids, so that importing the same export twice changes nothing: the session's external id is
the exported one, else the exported public id; a message's client id is the exported one,
else ``seq-<seq>``. The exported ``seq`` is kept as ``source_seq`` (memories name their
evidence by it). Derived values (counts, sizes, token counts, summary, lifecycle) are
computed again by the instance that imports.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .._common import parse_timestamp
from .._json import expect, get_dict, get_str, iter_json_lines, json_type, loads_json
from .._text import decode_text, require_text
from .._yaml import load_yaml
from ..base import ROLES, STATUSES, ImportFormatError, ParsedMessage, ParsedSession
from ..format import Format, Recognition
from ..sample import Sample

NAME = "memoryapp"
# Message kinds (sessions.models.MessageKind; importers do not import Django).
KINDS = ("prose", "injected", "console", "tool_output")
_RESERVED = {"session", "messages", "type"}


def _strings(record: dict[str, Any], key: str, where: str) -> list[str]:
    values = record.get(key) or []
    expect(values, list, f"'{key}' must be a list of strings", field=f"{where}{key}")
    for index, value in enumerate(values):
        expect(value, str, f"'{key}' must hold strings", field=f"{where}{key}[{index}]")
    return list(values)


def session_from_record(record: Any, *, line: int | None = None) -> ParsedSession:
    """A ``ParsedSession`` (no messages yet) from an exported session object."""
    record = expect(record, dict, "'session' must be an object", line=line, field="session")

    def text(key: str) -> str:
        return get_str(record, key, line=line, field=f"session.{key}")

    status = text("status")
    if status and status not in STATUSES:
        raise ImportFormatError(
            f"'status' must be one of {', '.join(STATUSES)}; got {status!r}",
            line=line,
            field="session.status",
        )
    return ParsedSession(
        source_format=text("source_format") or "api",
        external_id=text("external_id") or text("id"),
        title=text("title"),
        agent_name=text("agent_name"),
        agent_persona=text("agent_persona"),
        workflow=text("workflow"),
        user_name=text("user_name"),
        status=status,
        started_at=parse_timestamp(record.get("started_at"), line=line, field="session.started_at"),
        ended_at=parse_timestamp(record.get("ended_at"), line=line, field="session.ended_at"),
        topics=_strings(record, "topics", "session."),
        artifacts=_strings(record, "artifacts", "session."),
        metadata=get_dict(record, "metadata", line=line, field="session.metadata"),
    )


def message_from_record(record: Any, *, line: int | None = None, where: str = "") -> ParsedMessage:
    """A ``ParsedMessage`` from an exported message object (``where`` prefixes fields)."""
    record = expect(record, dict, "each message must be an object", line=line, field=where or None)

    def text(key: str) -> str:
        return get_str(record, key, line=line, field=f"{where}{key}")

    role = text("role")
    if role not in ROLES:
        raise ImportFormatError(
            f"'role' must be one of {', '.join(ROLES)}; got {role!r}",
            line=line,
            field=f"{where}role",
        )
    seq = record.get("seq")
    if seq is not None and (not isinstance(seq, int) or isinstance(seq, bool) or seq < 0):
        raise ImportFormatError(
            f"'seq' must be a whole number from 0, got {seq!r}", line=line, field=f"{where}seq"
        )
    metadata = dict(get_dict(record, "metadata", line=line, field=f"{where}metadata"))
    if record.get("removed_at"):
        # A tombstone: its text is gone; when and by whom it was removed stays with it.
        metadata["removed"] = {"at": record["removed_at"], "by": record.get("removed_by") or ""}
    kind = text("kind")
    pinned = record.get("pinned", False)
    expect(pinned, bool, "'pinned' must be true or false", line=line, field=f"{where}pinned")
    return ParsedMessage(
        role=role,
        content=text("content"),
        author=text("author"),
        timestamp=parse_timestamp(record.get("timestamp"), line=line, field=f"{where}timestamp"),
        tool_name=text("tool_name"),
        tool_call_id=text("tool_call_id"),
        client_id=text("client_id") or ("" if seq is None else f"seq-{seq}"),
        metadata=metadata,
        source_seq=seq,
        kind=kind if kind in KINDS else "",
        pinned=pinned,
    )


def _document(document: Any) -> ParsedSession:
    document = expect(document, dict, "expected an object with 'session' and 'messages'")
    if "session" not in document:
        raise ImportFormatError(
            "no 'session' object: this is not a memoryapp export", field="session"
        )
    session = session_from_record(document["session"])
    messages = document.get("messages") or []
    expect(messages, list, "'messages' must be a list", field="messages")
    session.messages = [
        message_from_record(record, where=f"messages[{index}].")
        for index, record in enumerate(messages)
    ]
    session.attachments = {k: v for k, v in document.items() if k not in _RESERVED}
    return session


def _jsonl(text: str) -> ParsedSession:
    session: ParsedSession | None = None
    messages: list[ParsedMessage] = []
    attachments: dict[str, Any] = {}
    for line, record in iter_json_lines(text):
        kind = record.get("type")
        if kind == "session":
            if session is not None:
                raise ImportFormatError("a second 'session' line: one session per file", line=line)
            session = session_from_record(record, line=line)
        elif kind == "message":
            messages.append(message_from_record(record, line=line))
        elif kind == "attachment":
            name = get_str(record, "name", line=line)
            if not name:
                raise ImportFormatError(
                    "an attachment line needs a 'name'", line=line, field="name"
                )
            attachments[name] = record.get("data")
        else:
            raise ImportFormatError(
                f"'type' must be session, message or attachment; got {json_type(kind)} {kind!r}",
                line=line,
                field="type",
            )
    if session is None:
        raise ImportFormatError("no 'type': 'session' line: this is not a memoryapp export")
    session.messages = messages
    session.attachments = attachments
    return session


def parse_memoryapp(data: bytes) -> list[ParsedSession]:
    """One exported session, in JSON, JSONL or YAML (told apart by the content)."""
    text = decode_text(data)
    require_text(text)
    if not text.lstrip().startswith("{"):
        return [_document(load_yaml(text, what="YAML"))]
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        return [_jsonl(text)]  # JSON Lines (its own reader names a broken line)
    if isinstance(document, dict) and document.get("type") == "session":
        return [_jsonl(text)]  # a JSONL export of a session without messages
    return [_document(loads_json(text))]


def is_memoryapp_document(document: Any) -> bool:
    """A parsed JSON or YAML document shaped like our export."""
    return (
        isinstance(document, dict)
        and isinstance(document.get("session"), dict)
        and isinstance(document.get("messages"), list)
        and "agent_name" in document["session"]
    )


def is_memoryapp_record(record: dict[str, Any]) -> bool:
    """The first line of our JSONL export."""
    return record.get("type") == "session" and "agent_name" in record


_MEMORYAPP_YAML = re.compile(r"\Asession:[ \t]*\r?\n[ \t]+id:")


def _claims_document(sample: Sample) -> int:
    # The first claim: our export (or its JSON Lines, one line long) is nobody else's.
    document = sample.document
    ours = is_memoryapp_document(document) or (
        isinstance(document, dict) and is_memoryapp_record(document)
    )
    return 100 if ours else 0


def _claims_lines(sample: Sample) -> int:
    return 100 if is_memoryapp_record(sample.records[0]) else 0


def _claims_text(sample: Sample) -> int:
    return 60 if _MEMORYAPP_YAML.match(sample.head) else 0


FORMAT = Format(
    name=NAME,
    position=15,
    description="a memoryapp session export (JSON, JSONL or YAML)",
    documentation=(
        "our own session export as JSON, JSON Lines or YAML ([export formats](#export-formats))"
    ),
    parse=parse_memoryapp,
    recognition=Recognition(document=_claims_document, lines=_claims_lines, text=_claims_text),
)


__all__ = ["message_from_record", "parse_memoryapp", "session_from_record"]
