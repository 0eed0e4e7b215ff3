"""Chat event logs as NDJSON (docs/api.md): one event per line, many sessions per file.

Each event is ``{ts, source, session_id, person_id, char_id, sender, text}``: ``ts`` in
epoch seconds, ``sender`` "user" or "assistant". Files live at
``/state/sessions/<person_id>/<char_id>/<session_id>.ndjson`` but nothing stops a file
from mixing sessions, so events are grouped by ``session_id`` (sessions in order of first
appearance, events in file order within a session).

Choices:

* ``char_id`` → ``agent_name``, ``person_id`` → ``user_name``, ``source`` →
  ``metadata["source"]`` (first value seen per session; ``metadata["sources"]`` lists them
  when a session mixes several).
* ``sender`` user/human → user; assistant/ai/bot/agent/character (or the ``char_id``
  itself) → assistant; system and tool map to themselves; any other sender is kept as the
  ``author`` of an assistant message (a named character speaking).
* ``ts`` may also be an ISO-8601 string or epoch milliseconds; missing ``ts`` leaves the
  message without a time. ``session_id``, ``sender`` and ``text`` are required.
* **Ids.** Events have no id of their own (an ``id``/``event_id`` is used when present):
  the client id is a hash of session, time, sender and text (``ev-<16 hex>``, then
  ``#2``... for exact repeats), so the same event posted twice — in a re-imported file or
  a retried REST call — maps to the same message.

``parse_events`` takes already-decoded event dicts (the REST endpoint uses it); errors
name the 1-based position of the event as its line.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

from .._common import ensure_unique_client_ids, parse_timestamp, time_bounds
from .._json import expect, get_str, iter_json_lines
from .._text import decode_text, require_text
from ..base import ImportFormatError, ParsedMessage, ParsedSession
from ..format import Format, Recognition
from ..sample import Sample

NAME = "ndjson_events"

_SENDERS = {
    "user": "user",
    "human": "user",
    "person": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "bot": "assistant",
    "agent": "assistant",
    "character": "assistant",
    "system": "system",
    "tool": "tool",
}
_REQUIRED = ("session_id", "sender", "text")


def _event_id(event: Mapping[str, Any], session_id: str, sender: str, text: str) -> str:
    for key in ("id", "event_id"):
        value = event.get(key)
        if isinstance(value, str | int) and not isinstance(value, bool) and str(value):
            return str(value)
    digest = hashlib.sha256(
        "\x1f".join([session_id, str(event.get("ts", "")), sender, text]).encode("utf-8")
    ).hexdigest()
    return f"ev-{digest[:16]}"


def parse_events(
    events: Iterable[Mapping[str, Any]], *, first_line: int = 1
) -> list[ParsedSession]:
    """Group decoded events into sessions; ``first_line`` numbers the first event."""
    return _group(enumerate(events, first_line))


def _group(numbered: Iterable[tuple[int, Any]]) -> list[ParsedSession]:
    sessions: dict[str, ParsedSession] = {}
    sources: dict[str, list[str]] = {}
    for line, event in numbered:
        expect(event, Mapping, "an event must be an object", line=line)
        event = dict(event)
        for key in _REQUIRED:
            if event.get(key) is None:
                raise ImportFormatError(f"the event has no '{key}'", line=line, field=key)
        session_id = get_str(event, "session_id", line=line)
        sender = get_str(event, "sender", line=line)
        text = event["text"]
        expect(text, str, "'text' must be a string", line=line, field="text")
        char_id = get_str(event, "char_id", line=line)
        person_id = get_str(event, "person_id", line=line)
        source = get_str(event, "source", line=line)
        role = _SENDERS.get(sender.lower(), "assistant")
        if char_id and sender == char_id:
            role = "assistant"
        session = sessions.get(session_id)
        if session is None:
            session = sessions[session_id] = ParsedSession(
                source_format=NAME,
                external_id=session_id,
                agent_name=char_id,
                user_name=person_id,
            )
            sources[session_id] = []
        session.agent_name = session.agent_name or char_id
        session.user_name = session.user_name or person_id
        if source and source not in sources[session_id]:
            sources[session_id].append(source)
        author = sender if sender.lower() not in _SENDERS else ""
        if role == "assistant" and not author:
            author = char_id
        elif role == "user" and not author:
            author = person_id
        session.messages.append(
            ParsedMessage(
                role=role,
                content=text,
                author=author,
                timestamp=parse_timestamp(event.get("ts"), line=line, field="ts"),
                client_id=_event_id(event, session_id, sender, text),
            )
        )
    for session_id, session in sessions.items():
        ensure_unique_client_ids(session.messages)
        session.started_at, session.ended_at = time_bounds(session.messages)
        if sources[session_id]:
            session.metadata["source"] = sources[session_id][0]
            if len(sources[session_id]) > 1:
                session.metadata["sources"] = sources[session_id]
    return list(sessions.values())


def parse_ndjson_events(data: bytes) -> list[ParsedSession]:
    """Parse an NDJSON event file into one session per ``session_id``."""
    text = decode_text(data)
    require_text(text)
    return _group(iter_json_lines(text))


def _claims_record(obj: dict[str, Any]) -> int:
    return 40 if "sender" in obj and "session_id" in obj and "text" in obj else 0


def _claims_lines(sample: Sample) -> int:
    return 30 if NAME in sample.owners else 0


def _named_like(name: str) -> bool:
    return name.endswith(".ndjson")


FORMAT = Format(
    name=NAME,
    position=9,
    description="NDJSON chat events",
    documentation=("chat event logs, one JSON event per line (as `POST /api/v1/events` takes)"),
    parse=parse_ndjson_events,
    recognition=Recognition(record=_claims_record, lines=_claims_lines, filename=_named_like),
    label="NDJSON events",
)


__all__ = ["parse_events", "parse_ndjson_events"]
