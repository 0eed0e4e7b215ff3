"""Aider chat history Markdown (``.aider.chat.history.md``), one file for many sessions.

Aider appends to the file as it goes:

* ``# aider chat started at YYYY-MM-DD HH:MM:SS`` opens a session;
* the person's input is written as ``#### <line>`` (every line of a multi-line input
  repeats the prefix), each line ending with Markdown's two-space hard break;
* console output is written as ``> <text>`` plus the hard break: the startup banner,
  ``Tokens: ... Cost: ...``, ``Applied edit to <file>``, ``Commit <sha> <message>``,
  confirmation prompts with their answer. Only the first line of a multi-line output gets
  the ``>``, so lines that follow a ``>`` line directly (no blank line) belong to it;
* anything else is the assistant's reply, written after a blank line.

Choices:

* **Console output** becomes ``tool`` messages (one per uninterrupted block of ``>``
  lines), ``tool_name`` = ``author`` = "aider", no ``tool_call_id`` (aider has no calls).
  What the output says is also lifted into metadata: the tool message gets ``commits``
  ``[{sha, message}]``, ``edited_files``, ``tokens`` (the "Tokens: ... Cost: ..." line);
  the session gets ``aider_version``, ``model``, ``edit_format``, ``commits``, and
  ``artifacts`` = the files aider applied edits to.
* **Telling input from headings.** A reply can contain ``####`` Markdown headings. A
  ``####`` block is the person's input when it matches an entry of the optional
  ``.aider.input.history`` (``# <time>`` then ``+<line>`` lines), else when its lines end
  with aider's two-space hard break (a heading written by the model does not), else when
  neither signal is available. When the file kept no trailing spaces (an editor stripped
  them) and the input history matched nothing in a session, every ``####`` block counts
  as input.
* **Times.** No per-message timestamps: every message gets the session start time,
  except that input matched in the input history gets that entry's time, and the replies
  and output after it inherit it. Aider writes local time without a zone: taken as UTC.
* **Ids.** Session ``external_id`` = ``aider:<start time ISO>``; client id =
  ``L<line>`` of the message's first line (the file is append-only, so it is stable).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from .._common import parse_timestamp
from .._text import decode_text, require_text, split_lines
from ..base import ImportFormatError, ParsedMessage, ParsedSession
from ..format import Format, Recognition
from ..sample import Sample

NAME = "aider"
AGENT_NAME = "aider"

# A session's header in the chat history, and an entry's header in the input history.
_TIME = r"(\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:\.\d+)?)"
_START = re.compile(rf"^# aider chat started at {_TIME}\s*$")
_INPUT_ENTRY = re.compile(rf"^# {_TIME}\s*$")
# What aider's console output says, lifted into metadata.
_VERSION = re.compile(r"^Aider v(\S+)")
_MODEL = re.compile(r"^(?:Main )?[Mm]odel: (\S+)(?: with (\S+) edit format)?")
_COMMIT = re.compile(r"^Commit ([0-9a-f]{7,40}) (.*)$")
_APPLIED = re.compile(r"^Applied edit to (.+)$")
_TOKENS = re.compile(r"^Tokens: ")
_HARD_BREAK = "  "


@dataclass
class _Block:
    kind: str  # "input", "output", "reply"
    line: int  # first line number
    lines: list[str] = field(default_factory=list)
    end: int = 0  # last line number
    marked: bool = True  # every input line ended with the hard break


@dataclass
class _InputHistory:
    """Entries of ``.aider.input.history``: text -> sorted entry positions, and their times."""

    times: list[datetime | None]
    by_text: dict[str, list[int]]

    def find(self, text: str, after: int) -> int | None:
        positions = self.by_text.get(_normal(text))
        if not positions:
            return None
        index = bisect.bisect_left(positions, after)
        return positions[index] if index < len(positions) else None


def _normal(text: str) -> str:
    """Text compared between the chat history and the input history."""
    return "\n".join(line.rstrip() for line in text.strip().split("\n"))


def _strip_break(line: str) -> tuple[str, bool]:
    if line.endswith(_HARD_BREAK):
        return line[: -len(_HARD_BREAK)], True
    return line, False


def _read_input_history(data: bytes | str | None) -> _InputHistory | None:
    if data is None:
        return None
    text = decode_text(data, what="the input history")
    times: list[datetime | None] = []
    texts: list[list[str]] = []
    for number, line in enumerate(split_lines(text), 1):
        match = _INPUT_ENTRY.match(line)
        if match:
            times.append(parse_timestamp(match.group(1), line=number))
            texts.append([])
        elif line.startswith("+") and texts:
            texts[-1].append(line[1:])
    by_text: dict[str, list[int]] = {}
    for position, lines in enumerate(texts):
        by_text.setdefault(_normal("\n".join(lines)), []).append(position)
    return _InputHistory(times, by_text)


def _blocks(lines: list[tuple[int, str]], marks_kept: bool) -> list[_Block]:
    """Cut one session's lines into input, output and reply blocks."""
    blocks: list[_Block] = []
    current: _Block | None = None
    previous_blank = True

    def start(kind: str, number: int) -> _Block:
        block = _Block(kind, number)
        blocks.append(block)
        return block

    for number, line in lines:
        in_reply = current is not None and current.kind == "reply"
        if line.startswith("####") and (len(line) == 4 or line[4] == " "):
            body, marked = _strip_break(line)
            if current is None or current.kind != "input":
                current = start("input", number)
            current.lines.append(body[5:] if len(body) > 4 else "")
            current.marked = current.marked and marked
        elif (
            line.startswith(">")
            and (len(line) == 1 or line[1] == " ")
            # A Markdown quote inside a reply has no hard break; aider's output always has.
            and not (in_reply and marks_kept and not line.endswith(_HARD_BREAK))
        ):
            if current is None or current.kind != "output":
                current = start("output", number)
            current.lines.append(_strip_break(line)[0][2:])
        elif not line.strip():
            if current is not None and current.kind != "reply":
                current = None  # a blank line ends an input or output block
            elif current is not None:
                current.lines.append(line)
        elif current is not None and current.kind == "output" and not previous_blank:
            current.lines.append(_strip_break(line)[0])  # continuation of multi-line output
        else:
            if current is None or current.kind != "reply":
                current = start("reply", number)
            current.lines.append(line)
        if current is not None:
            current.end = number
        previous_blank = not line.strip()
    return blocks


def _trim_blank(lines: list[str]) -> str:
    """The lines joined, without the blank lines around them."""
    first, last = 0, len(lines)
    while first < last and not lines[first].strip():
        first += 1
    while last > first and not lines[last - 1].strip():
        last -= 1
    return "\n".join(lines[first:last])


def _output_metadata(lines: list[str], session_meta: dict[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    for line in lines:
        text = line.strip()
        if match := _VERSION.match(text):
            session_meta.setdefault("aider_version", match.group(1))
        elif match := _MODEL.match(text):
            session_meta.setdefault("model", match.group(1))
            if match.group(2):
                session_meta.setdefault("edit_format", match.group(2))
        elif match := _COMMIT.match(text):
            commit = {"sha": match.group(1), "message": match.group(2)}
            meta.setdefault("commits", []).append(commit)
            session_meta.setdefault("commits", []).append(commit)
        elif match := _APPLIED.match(text):
            meta.setdefault("edited_files", []).append(match.group(1))
        elif _TOKENS.match(text):
            meta["tokens"] = text
    return meta


def _build_session(
    start: datetime | None,
    lines: list[tuple[int, str]],
    history: _InputHistory | None,
    pointer: int,
    marks_kept: bool,
) -> tuple[ParsedSession, int]:
    blocks = _blocks(lines, marks_kept)
    raw = dict(lines)
    # Decide which "####" blocks are input before building messages (see module doc).
    matched: dict[int, int] = {}
    probe = pointer
    for block in blocks:
        if history is None:
            break
        if block.kind == "input":
            position = history.find("\n".join(block.lines), probe)
            if position is not None:
                matched[id(block)] = position
                probe = position + 1
    use_history = bool(matched)
    session_meta: dict[str, Any] = {}
    messages: list[ParsedMessage] = []
    now = start
    artifacts: list[str] = []
    reply_start = 0  # first line of the assistant message being built
    for block in blocks:
        if block.kind == "input" and id(block) in matched:
            entry_time = history.times[matched[id(block)]] if history else None
            if entry_time is not None and (now is None or entry_time >= now):
                now = entry_time
        elif block.kind == "input" and (
            (marks_kept and not block.marked) or (use_history and not marks_kept)
        ):
            block.kind = "reply"  # a "####" heading inside the assistant's reply
        if block.kind == "input":
            messages.append(
                ParsedMessage(
                    role="user",
                    content=_trim_blank(block.lines),
                    timestamp=now,
                    client_id=f"L{block.line}",
                )
            )
        elif block.kind == "output":
            meta = _output_metadata(block.lines, session_meta)
            artifacts += meta.get("edited_files", [])
            messages.append(
                ParsedMessage(
                    role="tool",
                    content="\n".join(block.lines),
                    author=AGENT_NAME,
                    timestamp=now,
                    tool_name=AGENT_NAME,
                    client_id=f"L{block.line}",
                    metadata=meta,
                )
            )
        else:
            # Reply text is taken from the file's own lines, so a heading cut out as a
            # "####" block comes back with its prefix, and the reply around it is whole.
            if not (messages and messages[-1].role == "assistant"):
                reply_start = block.line
            content = _trim_blank([raw[n] for n in range(reply_start, block.end + 1) if n in raw])
            if messages and messages[-1].role == "assistant":
                messages[-1].content = content
            elif content:
                messages.append(
                    ParsedMessage(
                        role="assistant", content=content, timestamp=now, client_id=f"L{block.line}"
                    )
                )
    model = session_meta.get("model", "")
    if model:
        for message in messages:
            if message.role == "assistant":
                message.author = model
                message.metadata["model"] = model
    session = ParsedSession(
        source_format=NAME,
        messages=messages,
        external_id=f"aider:{start.replace(tzinfo=None).isoformat()}" if start else "",
        agent_name=AGENT_NAME,
        started_at=start,
        ended_at=now if now != start else None,
        artifacts=list(dict.fromkeys(artifacts)),
        metadata=session_meta,
    )
    used = max(matched.values(), default=pointer - 1) + 1
    return session, used


def parse_aider(data: bytes, *, input_history: bytes | str | None = None) -> list[ParsedSession]:
    """Parse an aider chat history; ``input_history`` is ``.aider.input.history``, optional."""
    text = decode_text(data)
    require_text(text)
    history = _read_input_history(input_history)
    all_lines = split_lines(text)
    # Aider ends every input and output line with a two-space hard break; files whose
    # trailing spaces were stripped (editors, pre-commit hooks) lose that signal.
    marks_kept = any(
        line.endswith(_HARD_BREAK) for line in all_lines if line.startswith(("> ", "#### "))
    )
    sections: list[tuple[datetime | None, list[tuple[int, str]]]] = []
    current: list[tuple[int, str]] = []
    start: datetime | None = None
    saw_header = False
    for number, line in enumerate(all_lines, 1):
        match = _START.match(line)
        if match:
            if current or saw_header:
                sections.append((start, current))
            start = parse_timestamp(match.group(1), line=number)
            current = []
            saw_header = True
        else:
            current.append((number, line))
    sections.append((start, current))
    if not saw_header and not any(line.startswith(("#### ", "> ")) for _, line in sections[0][1]):
        raise ImportFormatError(
            "this does not look like an aider chat history: no '# aider chat started at' "
            "line and no '#### ' input lines"
        )

    sessions: list[ParsedSession] = []
    pointer = 0
    seen_ids: dict[str, int] = {}
    for section_start, lines in sections:
        if not any(line.strip() for _, line in lines) and section_start is None:
            continue  # blank text before the first header
        session, pointer = _build_session(section_start, lines, history, pointer, marks_kept)
        if session.external_id:
            # Two sessions started in the same second must not share an id.
            count = seen_ids.get(session.external_id, 0) + 1
            seen_ids[session.external_id] = count
            if count > 1:
                session.external_id += f"#{count}"
        sessions.append(session)
    return sessions


_AIDER = re.compile(r"^# aider chat started at \d{4}-\d\d-\d\d", re.MULTILINE)


def _claims_text(sample: Sample) -> int:
    return 40 if _AIDER.search(sample.head) or sample.name.endswith("chat.history.md") else 0


def _input_history_beside(path: Path) -> Path | None:
    """``.aider.input.history`` beside ``.aider.chat.history.md`` (same prefix)."""
    name = path.name
    if not name.endswith("chat.history.md"):
        return None
    sibling = path.with_name(name[: -len("chat.history.md")] + "input.history")
    return sibling if sibling.is_file() else None


def _read_path(path: Path, data: bytes) -> list[ParsedSession]:
    history = _input_history_beside(path)
    return parse_aider(data, input_history=history.read_bytes() if history else None)


FORMAT = Format(
    name=NAME,
    position=3,
    description=".aider.chat.history.md",
    documentation=(
        "Aider chat history Markdown (`.aider.chat.history.md`), many sessions per file"
    ),
    parse=parse_aider,
    recognition=Recognition(text=_claims_text),
    label="Aider chat history",
    read_path=_read_path,
)


__all__ = ["parse_aider"]
