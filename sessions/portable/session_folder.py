"""A session as a self-contained folder (docs/api.md, "Export formats"), zipped:
``<public id>/transcript.jsonl`` (one Anthropic Messages API message per line),
``events.jsonl`` (the session's events) and ``metadata.json``.
``transcripts.formats.anthropic_session`` reads it back.

Each transcript line is one stored message: user and assistant text as a ``text`` block,
a tool call as a ``tool_use`` block (its input: the call's JSON when the content is a JSON
object, else ``{"text": content}``), a tool result as a ``tool_result`` block in a user
line, a system message as ``{"role": "system", "content": "..."}``. Beside the Anthropic
fields, each line carries ``memoryapp``: the message's exact fields as the JSON export
writes them, and ``metadata.json`` carries the session's (and its attachments), so nothing
is lost on the way back; other readers ignore the extra key.

Written as a stream: members are compressed as they are written and handed on in chunks,
so a long session is never held whole (events go to a temporary file until the
transcript is done).
"""

from __future__ import annotations

import json
import tempfile
import zipfile
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

from transcripts.formats.anthropic_session import EVENTS, METADATA, TRANSCRIPT

CONTENT_TYPE = "application/zip"
EXTENSION = "zip"
_SPOOL_BYTES = 8 * 1024 * 1024
_ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)


class _Pipe:
    """A write-only, unseekable file: what zipfile writes is collected until taken."""

    def __init__(self) -> None:
        self.chunks: list[bytes] = []
        self.offset = 0

    def write(self, data: bytes) -> int:
        self.chunks.append(bytes(data))
        self.offset += len(data)
        return len(data)

    def tell(self) -> int:
        return self.offset

    def flush(self) -> None:
        pass

    def take(self) -> bytes:
        data, self.chunks = b"".join(self.chunks), []
        return data


def _member(folder: str, name: str, session: dict[str, Any]) -> zipfile.ZipInfo:
    """A member dated by the session's start (zip times start in 1980), not by the clock:
    the same session exports to the same bytes."""
    started = datetime.fromisoformat(session["started_at"].replace("Z", "+00:00"))
    info = zipfile.ZipInfo(f"{folder}/{name}", date_time=max(started.timetuple()[:6], _ZIP_EPOCH))
    info.compress_type = zipfile.ZIP_DEFLATED
    return info


def _line(record: dict[str, Any]) -> bytes:
    return (json.dumps(record, ensure_ascii=False) + "\n").encode()


def _tool_input(content: str) -> dict[str, Any]:
    try:
        value = json.loads(content)
    except ValueError:
        value = None
    return value if isinstance(value, dict) else {"text": content}


def transcript_line(exact: dict[str, Any]) -> dict[str, Any]:
    """The Anthropic message of one exported message (``message_data``)."""
    role, content = exact["role"], exact["content"]
    record: dict[str, Any]
    if role == "tool":
        block = {"type": "tool_result", "tool_use_id": exact["tool_call_id"], "content": content}
        if isinstance(exact["metadata"].get("is_error"), bool):
            block["is_error"] = exact["metadata"]["is_error"]
        record = {"role": "user", "content": [block]}
    elif role == "assistant" and exact["tool_name"]:
        block = {
            "type": "tool_use",
            "id": exact["tool_call_id"],
            "name": exact["tool_name"],
            "input": _tool_input(content),
        }
        record = {"role": "assistant", "content": [block]}
    elif role == "system":
        record = {"role": "system", "content": content}
    else:
        record = {"role": role, "content": [{"type": "text", "text": content}]}
    if exact["timestamp"]:
        record["timestamp"] = exact["timestamp"]
    # The exact fields; the content only where the blocks above do not hold it as it is.
    record["memoryapp"] = (
        exact if role == "assistant" and exact["tool_name"] else _without_content(exact)
    )
    return record


def _without_content(exact: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in exact.items() if key != "content"}


def _event(exact: dict[str, Any]) -> dict[str, Any]:
    event = {"ts": exact["timestamp"], "event": "message", "seq": exact["seq"]}
    event["role"] = exact["role"]
    if exact["tool_call_id"]:
        event["tool_call_id"] = exact["tool_call_id"]
    return event


def metadata_document(session: dict[str, Any], attachments: dict[str, Any]) -> dict[str, Any]:
    """``metadata.json``: the Amplifier fields first (for other readers), then ours."""
    return {
        "session_id": session["external_id"] or session["id"],
        "title": session["title"],
        "created": session["started_at"],
        "ended_at": session["ended_at"],
        "agent_name": session["agent_name"],
        "user_name": session["user_name"],
        "status": session["status"],
        "topics": session["topics"],
        "memoryapp": {"session": session, "attachments": attachments},
    }


def iter_session_folder(
    session: dict[str, Any], messages: Iterable[dict[str, Any]], attachments: dict[str, Any]
) -> Iterator[bytes]:
    """The zip, in chunks: ``session`` and ``messages`` as ``session_data``/``message_data``
    give them."""
    folder = session["id"]
    pipe = _Pipe()
    with (
        tempfile.SpooledTemporaryFile(max_size=_SPOOL_BYTES) as events,
        zipfile.ZipFile(pipe, "w", zipfile.ZIP_DEFLATED) as archive,
    ):
        events.write(_line({"ts": session["started_at"], "event": "session:start"}))
        with archive.open(
            _member(folder, TRANSCRIPT, session), "w", force_zip64=True
        ) as transcript:
            yield pipe.take()  # the member's header, before any message is read
            for exact in messages:
                transcript.write(_line(transcript_line(exact)))
                if exact["timestamp"]:
                    events.write(_line(_event(exact)))
                if pipe.chunks:
                    yield pipe.take()
        if session["ended_at"]:
            events.write(_line({"ts": session["ended_at"], "event": "session:end"}))
        events.seek(0)
        with archive.open(_member(folder, EVENTS, session), "w", force_zip64=True) as member:
            while chunk := events.read(1024 * 1024):
                member.write(chunk)
                if pipe.chunks:
                    yield pipe.take()
        document = metadata_document(session, attachments)
        metadata = json.dumps(document, ensure_ascii=False, indent=2)
        archive.writestr(_member(folder, METADATA, session), metadata)
    yield pipe.take()
