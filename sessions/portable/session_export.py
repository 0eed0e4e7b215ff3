"""Export one session in a portable format (docs/api.md, "Export formats"): yaml, json,
markdown, jsonl.

``export_response(session, fmt)`` is the download the API and the UI both answer: the
session with all its messages, streamed, named ``<public id>.<extension>``.

Under it, ``export_session(session, messages, fmt)`` returns ``(body, content_type,
extension)``; ``iter_export`` yields the same body as bytes chunks, one per message after
the header, so a 100,000-message session streams without being held in memory. Both take
what they are given: ``messages`` is iterated once, in order, and nothing is read from the
database (a session's project is used only if already loaded).

Formats (the extension has no leading dot):

* ``json`` (``application/json``, ``json``): ``{"session": {...}, "messages": [...]}``,
  indented by 2, UTF-8 (not ``\\u`` escapes). Byte for byte what ``json.dumps(...,
  indent=2, ensure_ascii=False)`` gives, plus a final newline.
* ``jsonl`` (``application/x-ndjson``, ``jsonl``): a ``{"type": "session", ...}`` line, then
  one ``{"type": "message", ...}`` line per message. U+0085, U+2028 and U+2029 are written
  as ``\\u`` escapes so that no line reader splits a record.
* ``markdown`` (``text/markdown``, ``md``): a BMAD ``conversation.md``, readable
  back by ``transcripts.formats.conversation_md``.
* ``yaml`` (``application/yaml``, ``yaml``): the JSON structure through PyYAML's safe dumper;
  multi-line strings as literal blocks (``|``).
* ``anthropic_session`` (``application/zip``, ``zip``): the Anthropic session folder
  (``sessions/portable/session_folder.py``).

Every format reads back to an equal session through the import API: JSON, JSONL and YAML
with ``transcripts.formats.memoryapp``, Markdown with ``conversation_md`` (the exact
fields ride in HTML comments), the zip with ``anthropic_session``. Sections other apps keep
about a session (its memories) follow the messages: a key of the JSON/YAML document, an
``attachment`` line in JSONL, a comment after the last Markdown turn, ``metadata.json``
in the zip (``sessions/portable/attachments.py``).

Times are ISO 8601 in UTC with a ``Z`` (``2025-01-15T14:00:00Z``; microseconds when present).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

import yaml
from django.http import Http404, StreamingHttpResponse

from sessions.forget.messages import tombstone_text
from sessions.models import KEYWORD_VECTORS, Message
from sessions.portable import attachments as sections
from sessions.portable import session_folder
from teams.access import Reading
from transcripts.base import ImportFormatError
from transcripts.formats.conversation_md import (
    ATTACHMENTS_COMMENT,
    MESSAGE_COMMENT,
    SESSION_COMMENT,
    exact_comment,
    parse_conversation_md,
)

FORMATS: dict[str, tuple[str, str]] = {
    "json": ("application/json", "json"),
    "jsonl": ("application/x-ndjson", "jsonl"),
    "markdown": ("text/markdown; charset=utf-8", "md"),
    "yaml": ("application/yaml; charset=utf-8", "yaml"),
    "anthropic_session": (session_folder.CONTENT_TYPE, session_folder.EXTENSION),
}

# Sections beyond the messages (``sessions/portable/attachments.py``), by name, as plain data.
Attachments = Mapping[str, Any]
NO_ATTACHMENTS: Attachments = {}

# --- plain data -----------------------------------------------------------------------------


def _iso(moment: datetime | None) -> str | None:
    """ISO 8601 UTC with "Z"; a naive datetime is taken as UTC."""
    if moment is None:
        return None
    moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    return moment.isoformat().replace("+00:00", "Z")


def _text(value: Any) -> str:
    """A plain ``str`` ("" for None): a TextChoices member is a str subclass YAML refuses."""
    return "" if value is None else str(value)


def _plain(value: Any) -> Any:
    """JSON-native copy of a JSONField value (datetimes as ISO strings, tuples as lists)."""
    if value is None or type(value) in (str, bool, int, float):
        return value
    if isinstance(value, str):
        return str(value)
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_plain(v) for v in value]
    if isinstance(value, datetime):
        return _iso(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    return str(value)


def _project_slug(session: Any) -> str | None:
    """The project's slug if the instance already holds its project, else None (no query)."""
    try:
        field = type(session)._meta.get_field("project")
        if not field.is_cached(session):
            return None
    except Exception:  # not a model instance (a stand-in object): take what is there
        pass
    project = getattr(session, "project", None)
    return getattr(project, "slug", None) or None


def session_data(session: Any) -> dict[str, Any]:
    """The exported fields of a session, in a stable order."""
    project = _project_slug(session)
    return {
        "id": _text(session.public_id),
        "external_id": _text(session.external_id),
        "project": None if project is None else _text(project),
        "agent_name": _text(session.agent_name),
        "agent_persona": _text(session.agent_persona),
        "workflow": _text(session.workflow),
        "title": _text(session.title),
        "user_name": _text(session.user_name),
        "source_format": _text(session.source_format),
        "status": _text(session.status),
        "lifecycle": _text(session.lifecycle),
        "started_at": _iso(session.started_at),
        "ended_at": _iso(session.ended_at),
        "message_count": int(session.message_count or 0),
        "size_bytes": int(session.size_bytes or 0),
        "topics": [_text(t) for t in session.topics or []],
        "artifacts": [_text(a) for a in session.artifacts or []],
        "metadata": _plain(session.metadata or {}),
        "summary": _text(session.summary),
    }


def message_data(message: Any) -> dict[str, Any]:
    """The exported fields of a message, in a stable order; a removed message (a tombstone)
    adds when and by whom it was removed."""
    data = {
        "seq": None if message.seq is None else int(message.seq),
        "role": _text(message.role),
        "author": _text(message.author),
        "content": _text(message.content),
        "tool_name": _text(message.tool_name),
        "tool_call_id": _text(message.tool_call_id),
        "timestamp": _iso(message.timestamp),
        "token_count": int(message.token_count or 0),
        "metadata": _plain(message.metadata or {}),
        "client_id": _text(message.client_id),
        # An unsaved message holds the database default object until it is written.
        "kind": message.kind if isinstance(message.kind, str) else "",
        "pinned": message.pinned is True,
    }
    if getattr(message, "removed_at", None) is not None:
        data["removed_at"] = _iso(message.removed_at)
        data["removed_by"] = _text(message.removed_by)
    return data


# --- json / jsonl ---------------------------------------------------------------------------


def _json(value: Any, *, indent: int | None = None) -> str:
    return json.dumps(value, ensure_ascii=False, indent=indent)


def _iter_json(session: Any, messages: Iterable[Any], attachments: Attachments) -> Iterator[bytes]:
    # Same text as json.dumps({"session": ..., "messages": [...], **attachments}, indent=2),
    # one message at a time: an object nested two levels deep is the object dumped alone,
    # indented by 4.
    head = _json(session_data(session), indent=2).replace("\n", "\n  ")
    yield f'{{\n  "session": {head},\n  "messages": ['.encode()
    first = True
    for message in messages:
        body = _json(message_data(message), indent=2).replace("\n", "\n    ")
        yield f"{'' if first else ','}\n    {body}".encode()
        first = False
    yield b"]" if first else b"\n  ]"
    for name, data in attachments.items():
        nested = _json(_plain(data), indent=2).replace("\n", "\n  ")
        yield f",\n  {_json(name)}: {nested}".encode()
    yield b"\n}\n"


_LINE_BREAKS = str.maketrans({"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def _jsonl_line(record: dict[str, Any]) -> bytes:
    return (_json(record).translate(_LINE_BREAKS) + "\n").encode()


def _iter_jsonl(session: Any, messages: Iterable[Any], attachments: Attachments) -> Iterator[bytes]:
    yield _jsonl_line({"type": "session", **session_data(session)})
    for message in messages:
        yield _jsonl_line({"type": "message", **message_data(message)})
    for name, data in attachments.items():
        yield _jsonl_line({"type": "attachment", "name": name, "data": _plain(data)})


# --- yaml -----------------------------------------------------------------------------------


class _Dumper(yaml.SafeDumper):
    """Safe dumper writing multi-line strings as literal blocks."""


_UNICODE_BREAKS = ("\x85", "\u2028", "\u2029")


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    # PyYAML writes U+0085/U+2028/U+2029 raw in block and single-quoted scalars, where they
    # read back as line breaks (or fold into spaces): such strings are double-quoted, which
    # escapes them. Otherwise PyYAML itself falls back from "|" to quoting when a block cannot
    # hold the text (trailing spaces, tabs, "\r", control characters).
    if any(ch in value for ch in _UNICODE_BREAKS):
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style='"')
    if "\n" in value:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_Dumper.add_representer(str, _represent_str)


def _yaml(value: Any) -> str:
    text = yaml.dump(
        value, Dumper=_Dumper, allow_unicode=True, sort_keys=False, width=1_000_000_000
    )
    # A document ending in a "|+" block gets an explicit end marker; the pieces are joined
    # into one document, where the next less-indented line ends the block anyway.
    return text[:-4] if text.endswith("\n...\n") else text


def _iter_yaml(session: Any, messages: Iterable[Any], attachments: Attachments) -> Iterator[bytes]:
    yield _yaml({"session": session_data(session)}).encode()
    first = True
    for message in messages:
        if first:
            yield b"messages:\n"
            first = False
        # A block sequence under a mapping key sits at the key's indentation, so each
        # message dumped as a one-item list is exactly its part of the whole document.
        yield _yaml([message_data(message)]).encode()
    if first:
        yield b"messages: []\n"
    if attachments:
        yield _yaml({name: _plain(data) for name, data in attachments.items()}).encode()


# --- markdown (a BMAD conversation.md, docs/api.md) ----------------------------------


def _md_time(moment: datetime) -> str:
    moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S")


def _one_line(value: Any) -> str:
    return " ".join(str(value).split())


def _distinct(values: Iterable[str]) -> list[str]:
    seen: dict[str, None] = {}
    for value in values:
        value = _one_line(value)
        if value and value not in seen:
            seen[value] = None
    return list(seen)


def _participants(session: Any) -> list[str]:
    # From the session alone (the header is written before the first message is read).
    metadata = session.metadata if isinstance(session.metadata, dict) else {}
    recorded = metadata.get("participants")
    if isinstance(recorded, list) and all(isinstance(p, str) for p in recorded) and recorded:
        return _distinct(recorded)
    agents = metadata.get("agents")
    agents = agents if isinstance(agents, list) else []
    people = [session.user_name] if session.user_name else ["user"]
    return _distinct([*people, session.agent_name, *(a for a in agents if isinstance(a, str))])


def _speaker(message: Any, session: Any) -> str:
    """Who the importer should read back: user/system by role, agents and tools by name."""
    if message.role in ("user", "system"):
        return message.role
    if message.role == "tool":
        return _one_line(message.author or message.tool_name or "tool")
    return _one_line(message.author or session.agent_name or message.role)


def _md_header(session: Any) -> str:
    lines = ["# Conversation History", f"**Session:** {_one_line(session.public_id)}"]
    if session.started_at:
        lines.append(f"**Started:** {_md_time(session.started_at)} UTC")
    lines.append(f"**Participants:** {', '.join(_participants(session))}")
    fields = [
        ("Title", session.title),
        ("Agent", session.agent_name),
        ("Persona", session.agent_persona),
        ("Workflow", "" if session.workflow == "none" else session.workflow),
        ("Project", _project_slug(session)),
        ("Ended", f"{_md_time(session.ended_at)} UTC" if session.ended_at else ""),
        ("Topics", ", ".join(session.topics or [])),
        ("Summary", session.summary),
    ]
    lines += [f"**{name}:** {_one_line(value)}" for name, value in fields if value]
    lines.append(exact_comment(SESSION_COMMENT, session_data(session)))
    return "\n".join(lines) + "\n\n---\n\n"


def _str_list(value: Any) -> list[str] | None:
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return [_one_line(v) for v in value]
    return None


def _md_turn(number: int, message: Any, session: Any) -> str:
    heading = f"## Turn {number}"
    if message.timestamp:
        heading += f" - {_md_time(message.timestamp)}"
    if message.role == "tool":
        kind = "tool_result"
    elif message.tool_name or message.tool_call_id:
        kind = "tool_call"
    else:
        kind = "message"
    lines = [heading, f"**Speaker:** {_speaker(message, session)}", f"**Type:** {kind}"]
    if message.tool_name:
        lines.append(f"**Tool:** {_one_line(message.tool_name)}")
    if message.tool_call_id:
        lines.append(f"**Tool-Call-Id:** {_one_line(message.tool_call_id)}")
    metadata = message.metadata if isinstance(message.metadata, dict) else {}
    refs = _str_list(metadata.get("memory_refs"))
    if refs:
        lines.append(f"**Memory-Refs:** [{', '.join(refs)}]")
    removed = getattr(message, "removed_at", None) is not None
    body = f"_({tombstone_text(message)})_" if removed else message.content or ""
    stored = _str_list(metadata.get("memory_stored"))
    tail = ["", "**Memory Stored:**", *(f"- {item}" for item in stored)] if stored else []
    exact = message_data(message)
    if _reads_back("\n".join([*lines, "", body, *tail]), exact["content"]):
        del exact["content"]  # the body holds it as it is
    elif not removed:
        # The comment holds the content; the body shows it with the lines that would start
        # a turn (or look like our comments) escaped, so the turns still read apart.
        body = "\n".join(_ESCAPE.sub(r"\\\1", line) for line in body.split("\n"))
    readable = "\n".join([*lines, "", body, *tail])
    return f"{readable}\n\n{exact_comment(MESSAGE_COMMENT, exact)}\n\n---\n\n"


_ESCAPE = re.compile(r"^(\s*(?:#|<!--))")


def _reads_back(turn: str, content: str) -> bool:
    """Whether the conversation.md reader finds exactly ``content`` in ``turn``'s body (a
    body with a turn heading of its own, surrounding blanks or a "---" at its end does not)."""
    try:
        parsed = parse_conversation_md(turn.encode())[0].messages
    except ImportFormatError:
        return False
    return len(parsed) == 1 and parsed[0].content == content


def _iter_markdown(
    session: Any, messages: Iterable[Any], attachments: Attachments
) -> Iterator[bytes]:
    yield _md_header(session).encode()
    for number, message in enumerate(messages, 1):
        yield _md_turn(number, message, session).encode()
    if attachments:
        yield (exact_comment(ATTACHMENTS_COMMENT, _plain(dict(attachments))) + "\n").encode()


# --- entry points ---------------------------------------------------------------------------


def _iter_session_folder(
    session: Any, messages: Iterable[Any], attachments: Attachments
) -> Iterator[bytes]:
    exact = (message_data(message) for message in messages)
    return session_folder.iter_session_folder(session_data(session), exact, _plain(attachments))


_WRITERS = {
    "json": _iter_json,
    "jsonl": _iter_jsonl,
    "markdown": _iter_markdown,
    "yaml": _iter_yaml,
    "anthropic_session": _iter_session_folder,
}


def _check_format(fmt: str) -> None:
    if fmt not in FORMATS:
        raise ValueError(
            f"unsupported export format {fmt!r}; supported formats: {', '.join(FORMATS)}"
        )


def content_type_and_extension(fmt: str) -> tuple[str, str]:
    """``(content_type, extension)`` of a format; ValueError for an unknown one."""
    _check_format(fmt)
    return FORMATS[fmt]


def iter_export(
    session: Any, messages: Iterable[Any], fmt: str, attachments: Attachments = NO_ATTACHMENTS
) -> Iterator[bytes]:
    """The export of ``session`` as UTF-8 chunks (header first, then one per message, then
    the ``attachments``: sections other apps keep about the session, such as memories).

    The format is checked at once (ValueError), not when the iterator is first read.
    """
    _check_format(fmt)
    return _WRITERS[fmt](session, messages, attachments)


class UnknownExportFormat(ValueError):
    """A download asked for a format there is no writer for."""

    def __init__(self, fmt: str):
        super().__init__(f"unknown export format {fmt!r}; use one of {', '.join(FORMATS)}")
        self.format = fmt


def export_response(session: Any, fmt: str | None, *, access=None) -> StreamingHttpResponse:
    """The download of ``session`` and all its messages in ``fmt`` (any case; json when
    empty or None), streamed one message at a time. UnknownExportFormat for a format
    not in ``FORMATS``. Only a session ``access`` reads all of (``Reading.CONTENT``) is
    exported, else Http404 (an admin who lists a teammate's private session does not read
    it); its sections (memories) hold what ``access`` reads of them. ``access`` None: a
    caller with no ``Access`` (the server), all of it."""
    if access is not None and access.reading(session) != Reading.CONTENT:
        raise Http404("No such session.")
    fmt = (fmt or "json").lower()
    if fmt not in FORMATS:
        raise UnknownExportFormat(fmt)
    content_type, extension = FORMATS[fmt]
    messages = (
        Message.objects.of_session(session)
        .defer(*KEYWORD_VECTORS)  # large, and not exported
        .order_by("seq")
        .iterator(chunk_size=1000)
    )
    body = iter_export(session, messages, fmt, sections.collect(session, access))
    response = StreamingHttpResponse(body, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{session.public_id}.{extension}"'
    return response


def export_session(
    session: Any, messages: Iterable[Any], fmt: str, attachments: Attachments = NO_ATTACHMENTS
) -> tuple[bytes, str, str]:
    """``(body, content_type, extension)`` of one session in ``fmt``.

    ``fmt`` is one of ``FORMATS``; anything else raises ValueError.
    """
    content_type, extension = content_type_and_extension(fmt)
    body = b"".join(iter_export(session, messages, fmt, attachments))
    return body, content_type, extension


__all__ = [
    "FORMATS",
    "UnknownExportFormat",
    "content_type_and_extension",
    "export_response",
    "export_session",
    "iter_export",
    "message_data",
    "session_data",
]
