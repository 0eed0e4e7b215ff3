"""``conversation.md`` of a BMAD session folder (docs/api.md, import formats).

::

    # Conversation History
    **Session:** session-2026-01-11-abc123
    **Started:** 2026-01-11 14:30:00 UTC
    **Participants:** user-123, bmad-master, veritas, architect

    ---

    ## Turn 1 - 2026-01-11 14:30:00
    **Speaker:** user
    **Type:** message
    **Memory-Refs:** [DEC-001]

    <body, Markdown>

    **Memory Stored:**
    - Decision to use multi-agent review [DEC-001]

    ---

Choices:

* A turn starts at a ``## Turn <n> - <time>`` line followed (within its header lines) by
  ``**Speaker:**``; it ends at the next such header. The ``---`` separator, blank lines and
  an HTML comment (``<!-- Conversation continues... -->``) at the end of a turn are not
  content, but a ``---`` inside a body is kept.
* **Roles.** Speaker "user" or "human" → user;
  "system" → system; ``**Type:**`` tool_call / tool_result / tool → an assistant tool
  call / a tool message; every other speaker is an agent → assistant with ``author`` =
  the speaker.
* **Header lines** of a turn (``**Type:**``, ``**Memory-Refs:**``, any other
  ``**Key:** value`` right under ``**Speaker:**``) go to metadata: ``type``,
  ``memory_refs`` (a list), other keys lower-cased with dashes as underscores. The
  trailing ``**Memory Stored:**`` list is annotation by the memory system, not speech: it
  goes to ``metadata["memory_stored"]`` (a list) and out of the content.
* **Session.** ``**Session:**`` → ``external_id``; ``**Started:**`` → ``started_at``;
  ``**Participants:**`` → ``metadata["participants"]``; ``agent_name`` = the first agent
  speaker (all assistant speakers in ``metadata["agents"]``); ``user_name`` = the one participant
  that is neither an agent speaker nor "user", when there is exactly one. Turn times
  without a zone are UTC (the header says so).
* **Ids.** Client id = ``turn-<n>``.
* **Our own export** (``sessions/portable/session_export.py``) adds one HTML comment line under the
  header (``<!-- memoryapp:session {...} -->``), one at the end of each turn
  (``<!-- memoryapp:message {...} -->``: the message's exact fields, and its content when
  the body cannot hold it as it is) and one after the last turn with the sections beyond
  the messages (``<!-- memoryapp:attachments {...} -->``). Renderers hide them; when they
  are there they win over what the readable lines say, so the export reads back whole.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .._common import distinct, ensure_unique_client_ids, parse_timestamp
from .._json import loads_json
from .._text import decode_text, require_text, split_lines
from ..base import ImportFormatError, ParsedMessage, ParsedSession
from ..format import Format, Recognition
from ..sample import Sample
from .memoryapp import message_from_record, session_from_record

NAME = "conversation_md"
SESSION_COMMENT = "memoryapp:session"
MESSAGE_COMMENT = "memoryapp:message"
ATTACHMENTS_COMMENT = "memoryapp:attachments"
_EXACT = re.compile(r"^<!-- (memoryapp:[a-z]+) (\{.*\}) -->$")

_TURN = re.compile(r"^##\s+Turn\s+(\d+)\s*(?:[-\u2013\u2014]\s*(.*?))?\s*$")
_FIELD = re.compile(r"^\*\*([A-Za-z][A-Za-z0-9 _-]*):\*\*\s*(.*?)\s*$")
_MEMORY_STORED = re.compile(r"^\*\*Memory Stored:\*\*\s*$")
_SEPARATOR = re.compile(r"^\s*(?:---+|\*\*\*+|___+)\s*$")
_COMMENT = re.compile(r"^\s*<!--.*-->\s*$")
_USER_SPEAKERS = {"user", "human"}
_TOOL_CALL_TYPES = {"tool_call", "tool-call", "tool_use"}
_TOOL_RESULT_TYPES = {"tool_result", "tool-result", "tool", "tool_output"}


def exact_comment(name: str, data: dict[str, Any]) -> str:
    """One HTML comment line holding ``data`` as JSON; ">" is escaped so the JSON can never
    close the comment."""
    text = json.dumps(data, ensure_ascii=False).replace(">", "\\u003e")
    return f"<!-- {name} {text} -->"


def _exact(line: str, number: int) -> tuple[str, Any] | None:
    match = _EXACT.match(line.strip())
    if match is None:
        return None
    return match.group(1), loads_json(match.group(2), line=number)


def _list(value: str) -> list[str]:
    """ "[DEC-001, FIND-002]" or "a, b" as a list."""
    return [item.strip() for item in value.strip().strip("[]").split(",") if item.strip()]


def _body(lines: list[str]) -> tuple[str, list[str]]:
    """Content and the ``**Memory Stored:**`` items of a turn body."""
    end = len(lines)
    while end and (
        not lines[end - 1].strip()
        or _SEPARATOR.match(lines[end - 1])
        or _COMMENT.match(lines[end - 1])  # "<!-- Conversation continues... -->"
    ):
        end -= 1
    lines = lines[:end]
    stored: list[str] = []
    for index in range(len(lines) - 1, -1, -1):
        if _MEMORY_STORED.match(lines[index]):
            items = lines[index + 1 :]
            if all(not line.strip() or line.lstrip().startswith(("-", "*")) for line in items):
                stored = [line.lstrip()[1:].strip() for line in items if line.strip()]
                lines = lines[:index]
            break
    start = 0
    while start < len(lines) and not lines[start].strip():
        start += 1
    end = len(lines)
    while end > start and not lines[end - 1].strip():
        end -= 1
    return "\n".join(lines[start:end]), stored


def parse_conversation_md(data: bytes) -> list[ParsedSession]:
    """Parse one ``conversation.md`` into one session."""
    text = decode_text(data)
    require_text(text)
    lines = split_lines(text)
    header: dict[str, str] = {}
    turns: list[tuple[int, re.Match[str], list[str]]] = []
    exact: dict[str, Any] = {}  # our export's comments: session, attachments, per turn
    for number, line in enumerate(lines, 1):
        match = _TURN.match(line)
        found = _exact(line, number) if line.startswith("<!-- memoryapp:") else None
        if match and _has_speaker(lines, number):
            turns.append((number, match, []))
        elif found is not None and found[0] != MESSAGE_COMMENT:
            exact[found[0]] = found[1]
        elif turns:
            turns[-1][2].append(line)
        else:
            field = _FIELD.match(line)
            if field:
                header[field.group(1).strip().lower()] = field.group(2)
    if SESSION_COMMENT in exact:
        return [_exported(exact, turns)]
    if not turns:
        raise ImportFormatError(
            "this does not look like a conversation.md: no '## Turn <n> - <time>' heading "
            "followed by a '**Speaker:**' line"
        )
    messages: list[ParsedMessage] = []
    for number, match, body_lines in turns:
        messages.append(_turn(number, match, body_lines))
    ensure_unique_client_ids(messages)
    _link_tools(messages)

    participants = _list(header.get("participants", ""))
    agents = distinct([m.author for m in messages if m.role == "assistant"])
    leftovers = [p for p in participants if p not in agents and p.lower() not in _USER_SPEAKERS]
    started = parse_timestamp(header["started"], field="Started") if header.get("started") else None
    metadata: dict[str, Any] = {}
    if participants:
        metadata["participants"] = participants
    if agents:
        metadata["agents"] = agents
    stamps = [m.timestamp for m in messages if m.timestamp]
    return [
        ParsedSession(
            source_format=NAME,
            messages=messages,
            external_id=header.get("session", ""),
            title=header.get("title", ""),
            agent_name=agents[0] if agents else "",
            user_name=leftovers[0] if len(leftovers) == 1 else "",
            started_at=started or (min(stamps) if stamps else None),
            ended_at=max(stamps) if stamps else None,
            metadata=metadata,
        )
    ]


def _exported(exact: dict[str, Any], turns: list) -> ParsedSession:
    """A session our export wrote: its exact fields from the comments, each turn's content
    from its body unless the comment holds it."""
    session = session_from_record(exact[SESSION_COMMENT])
    for number, match, body_lines in turns:
        end, record = len(body_lines), None
        while end and (not body_lines[end - 1].strip() or _SEPARATOR.match(body_lines[end - 1])):
            end -= 1
        if end and body_lines[end - 1].startswith(f"<!-- {MESSAGE_COMMENT} "):
            end -= 1
            found = _exact(body_lines[end], number + end + 1)
            record = found[1] if found else None
        body_lines = body_lines[:end]
        if not isinstance(record, dict):
            raise ImportFormatError(
                f"turn {match.group(1)} has no '<!-- {MESSAGE_COMMENT} ... -->' line, as every "
                "turn of a memoryapp export does: was the file edited?",
                line=number,
            )
        if "content" not in record:
            record = {**record, "content": _turn(number, match, body_lines).content}
        session.messages.append(message_from_record(record, line=number))
    attachments = exact.get(ATTACHMENTS_COMMENT) or {}
    if not isinstance(attachments, dict):
        raise ImportFormatError(f"'{ATTACHMENTS_COMMENT}' must hold an object")
    session.attachments = attachments
    return session


def _has_speaker(lines: list[str], number: int) -> bool:
    """A turn heading is real when a ``**Speaker:**`` line follows among its header lines."""
    for line in lines[number : number + 6]:
        if line.startswith("**Speaker:**"):
            return True
        if line.strip() and not _FIELD.match(line):
            return False
    return False


def _turn(number: int, match: re.Match[str], body_lines: list[str]) -> ParsedMessage:
    turn_number, when_text = match.group(1), match.group(2) or ""
    fields: dict[str, str] = {}
    index = 0
    while index < len(body_lines):
        field = _FIELD.match(body_lines[index])
        if not field or _MEMORY_STORED.match(body_lines[index]):
            break
        fields[field.group(1).strip().lower()] = field.group(2)
        index += 1
    content, stored = _body(body_lines[index:])
    speaker = fields.pop("speaker", "")
    kind = fields.pop("type", "")
    meta: dict[str, Any] = {}
    if kind:
        meta["type"] = kind
    if "memory-refs" in fields:
        meta["memory_refs"] = _list(fields.pop("memory-refs"))
    for key, value in fields.items():
        meta[key.replace("-", "_").replace(" ", "_")] = value
    if stored:
        meta["memory_stored"] = stored
    role = "assistant"
    tool_name = ""
    if speaker.lower() in _USER_SPEAKERS:
        role = "user"
    elif speaker.lower() == "system":
        role = "system"
    elif kind.lower() in _TOOL_RESULT_TYPES:
        role, tool_name = "tool", meta.get("tool", speaker)
    elif kind.lower() in _TOOL_CALL_TYPES:
        tool_name = meta.get("tool", "tool")
    return ParsedMessage(
        role=role,
        content=content,
        author=speaker,
        timestamp=parse_timestamp(when_text, line=number, field="Turn time") if when_text else None,
        tool_name=tool_name,
        client_id=f"turn-{turn_number}",
        metadata=meta,
    )


def _link_tools(messages: list[ParsedMessage]) -> None:
    """Give each tool result the id of the latest unanswered tool call before it."""
    open_calls: list[ParsedMessage] = []
    for message in messages:
        if message.role == "assistant" and message.tool_name:
            message.tool_call_id = message.client_id
            open_calls.append(message)
        elif message.role == "tool" and open_calls:
            call = open_calls.pop()
            message.tool_call_id = call.tool_call_id
            message.tool_name = (
                call.tool_name if message.tool_name in ("", message.author) else message.tool_name
            )


_TURN_HEADING = re.compile(r"^##\s+Turn\s+\d+\b", re.MULTILINE)
_SPEAKER_LINE = re.compile(r"^\*\*Speaker:\*\*", re.MULTILINE)


def _claims_text(sample: Sample) -> int:
    head = sample.head
    turns = _TURN_HEADING.search(head) and _SPEAKER_LINE.search(head)
    return 30 if turns or "\n<!-- memoryapp:session {" in head else 0


def _named_like(name: str) -> bool:
    return name == "conversation.md"


FORMAT = Format(
    name=NAME,
    position=10,
    description="conversation.md with '## Turn' headings",
    documentation=(
        "a `conversation.md` of turns (`## Turn N - <time>`, `**Speaker:** …`), the shape the "
        "Markdown export writes"
    ),
    parse=parse_conversation_md,
    recognition=Recognition(text=_claims_text, filename=_named_like),
    label="conversation.md",
)


__all__ = ["parse_conversation_md"]
