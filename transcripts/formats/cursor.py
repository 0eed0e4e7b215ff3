"""Cursor chats exported as Markdown (the chat's "Export Chat" menu).

The file reads::

    # <chat title>
    _Exported on 7/8/2025 at 11:55:38 PDT from Cursor (1.2.2)_

    ---

    **User**

    <what the person typed>

    ---

    **Cursor**

    <the reply: prose, code blocks, the tool calls' outcomes as Cursor renders them>

Choices:

* **Turns.** A turn starts at a ``**User**`` or ``**Cursor**`` line that follows a ``---``
  rule; a ``---`` inside a reply (a Markdown rule) stays part of it. ``User`` → user,
  ``Cursor`` → assistant; text before the first turn beyond the heading is ignored. The
  export has no tool-call records: what Cursor shows of them is kept in the reply's text.
* **Times.** The export has one time, the export's, kept in ``metadata["exported_at"]``
  as written, and as ``ended_at`` when it reads ``M/D/YYYY at HH:MM:SS`` (or ``D/M/YYYY``
  when the day cannot be a month) with a ``GMT±H`` or US zone. Messages have no times.
* **Ids.** Client id = ``T<turn number>``; the session has no id of its own, so
  ``external_id`` is ``cursor-`` and a hash of the title and export line (re-importing the
  same export extends the same session).
"""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime, timedelta, timezone

from .._text import decode_text, require_text
from ..base import ImportFormatError, ParsedMessage, ParsedSession
from ..format import Format, Recognition
from ..sample import Sample

NAME = "cursor"
AGENT_NAME = "cursor"
EXPORT_LINE = re.compile(
    r"^_Exported on (?P<when>.+?) from Cursor \((?P<version>[^)]*)\)_\s*$", re.MULTILINE
)
_TURN = re.compile(r"^---[ \t]*\n(?:[ \t]*\n)*\*\*(User|Cursor)\*\*[ \t]*$", re.MULTILINE)
_WHEN = re.compile(
    r"^(?P<a>\d{1,2})/(?P<b>\d{1,2})/(?P<year>\d{4}) at (?P<h>\d{1,2}):(?P<m>\d\d):(?P<s>\d\d)"
    r"(?:\s*(?P<ampm>[AP]M))?\s*(?P<zone>GMT(?P<offset>[+-]\d{1,2}(?::?\d\d)?)?|[A-Z]{2,4})?$"
)

_ZONES = {
    "UTC": 0,
    "GMT": 0,
    "EST": -5,
    "EDT": -4,
    "CST": -6,
    "CDT": -5,
    "MST": -7,
    "MDT": -6,
    "PST": -8,
    "PDT": -7,
}
_ROLES = {"User": "user", "Cursor": "assistant"}


def is_cursor_export(text: str) -> bool:
    head = text[:4096]
    return bool(EXPORT_LINE.search(head)) and "**User**" in text[:65536]


def _offset(match: re.Match[str]) -> timezone | None:
    zone, offset = match["zone"], match["offset"]
    if offset:
        sign = -1 if offset.startswith("-") else 1
        digits = offset[1:].replace(":", "")
        hours, minutes = (
            (int(digits[:-2] or 0), int(digits[-2:])) if len(digits) > 2 else (int(digits), 0)
        )
        return timezone(sign * timedelta(hours=hours, minutes=minutes))
    if zone in _ZONES:
        return timezone(timedelta(hours=_ZONES[zone]))
    return None


def exported_at(when: str) -> datetime | None:
    """The export line's time, when it is in a shape we can read unambiguously enough."""
    match = _WHEN.match(when.strip())
    if match is None:
        return None
    zone = _offset(match)
    if zone is None:
        return None
    a, b = int(match["a"]), int(match["b"])
    month, day = (b, a) if a > 12 else (a, b)  # US order unless the first cannot be a month
    hour = int(match["h"])
    if match["ampm"] == "PM" and hour < 12:
        hour += 12
    elif match["ampm"] == "AM" and hour == 12:
        hour = 0
    try:
        moment = datetime(
            int(match["year"]), month, day, hour, int(match["m"]), int(match["s"]), tzinfo=zone
        )
    except ValueError:
        return None
    return moment.astimezone(UTC)


def parse_cursor(data: bytes) -> list[ParsedSession]:
    """Parse one exported Cursor chat into one session."""
    text = decode_text(data).replace("\r\n", "\n")
    require_text(text)
    header = EXPORT_LINE.search(text[:4096])
    turns = list(_TURN.finditer(text))
    if header is None or not turns:
        raise ImportFormatError(
            "this does not look like a Cursor chat export: it needs the line "
            "'_Exported on … from Cursor (…)_' and turns headed '**User**' / '**Cursor**' "
            "after a '---' rule"
        )
    title_line = text[: header.start()].strip().splitlines()
    title = title_line[-1].lstrip("#").strip() if title_line else ""
    messages = []
    for number, turn in enumerate(turns, 1):
        end = turns[number].start() if number < len(turns) else len(text)
        body = text[turn.end() : end].strip("\n")
        if number == len(turns):
            body = body.rstrip()
        messages.append(ParsedMessage(_ROLES[turn[1]], body.strip(), client_id=f"T{number}"))
    digest = hashlib.sha256(f"{title}\x1f{header[0]}".encode()).hexdigest()[:16]
    return [
        ParsedSession(
            source_format=NAME,
            messages=messages,
            external_id=f"cursor-{digest}",
            title=title,
            agent_name=AGENT_NAME,
            ended_at=exported_at(header["when"]),
            metadata={"exported_at": header["when"], "cursor_version": header["version"]},
        )
    ]


def _claims_text(sample: Sample) -> int:
    return 50 if is_cursor_export(sample.head) else 0


FORMAT = Format(
    name=NAME,
    position=13,
    description="Cursor chat exported as Markdown",
    documentation=(
        'a Cursor chat exported as Markdown ("Export Chat": `# title`, `_Exported on … from '
        "Cursor (…)_`, `**User**` / `**Cursor**` turns); the export has one time, kept as the "
        "session's end"
    ),
    parse=parse_cursor,
    recognition=Recognition(text=_claims_text),
    label="Cursor chat export",
)


__all__ = ["exported_at", "is_cursor_export", "parse_cursor"]
