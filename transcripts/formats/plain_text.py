"""Plain-text conversation logs (docs/api.md): ``User: ...`` / ``Assistant: ...`` lines.

A line starting with a speaker prefix opens a message: ``User:``/``Human:`` → user,
``Assistant:``/``AI:`` → assistant, ``System:`` → system, ``Tool:`` → tool (case does
not matter; spaces before the colon are allowed). Lines without a prefix continue the
previous speaker's message. Text before the first prefix, and a text with no prefix at
all, is a user message (the person pasted something).

The text is first cleaned by ``preprocess_conversation`` exactly as the original capture spec did;
each message's content is then the text after its prefix with the blank lines around it
removed (blank lines inside are kept, Markdown is untouched). There are no times and no
ids in the source: client ids are the message index ("0", "1", ...).
"""

from __future__ import annotations

import re

from .._text import decode_text, require_text
from ..base import ParsedMessage, ParsedSession
from ..format import Format, Recognition
from ..sample import Sample

NAME = "plain_text"

_PREFIX = re.compile(r"^(user|human|assistant|ai|system|tool)[ \t]*:[ \t]?(.*)$", re.IGNORECASE)
_ROLES = {
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "system": "system",
    "tool": "tool",
}


def preprocess_conversation(raw_text: str) -> str:
    r"""Clean and standardise conversation text before storage.

    1. strip leading/trailing whitespace; 2. normalise line endings to "\n"; 3. at most
    two consecutive newlines (three or more become two); 4. Markdown is left alone;
    5. NUL bytes removed. NULs go first so that removing one can neither leave three
    newlines in a row nor whitespace at the ends (the seed's own order, NULs last, can).
    """
    text = raw_text.replace("\x00", "")
    text = text.strip()
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return re.sub(r"\n{3,}", "\n\n", text)


def _finish(role: str, lines: list[str], index: int) -> ParsedMessage:
    return ParsedMessage(role=role, content="\n".join(lines).strip("\n"), client_id=str(index))


def parse_plain_text(data: bytes) -> list[ParsedSession]:
    """Parse a ``User: ... / Assistant: ...`` log into one session."""
    text = preprocess_conversation(decode_text(data))
    require_text(text)
    messages: list[ParsedMessage] = []
    role = "user"
    lines: list[str] = []
    for line in text.split("\n"):
        match = _PREFIX.match(line)
        if match:
            if any(part.strip() for part in lines):
                messages.append(_finish(role, lines, len(messages)))
            role = _ROLES[match.group(1).lower()]
            lines = [match.group(2)]
        else:
            lines.append(line)
    if any(part.strip() for part in lines) or not messages:
        messages.append(_finish(role, lines, len(messages)))
    return [ParsedSession(source_format=NAME, messages=messages)]


_PLAIN = re.compile(r"^(user|human|assistant|ai|system|tool)[ \t]*:", re.IGNORECASE | re.MULTILINE)


def _claims_text(sample: Sample) -> int:
    if _PLAIN.search(sample.head):
        return 20
    return 10 if sample.name.endswith((".txt", ".log")) else 0  # the last text resort


FORMAT = Format(
    name=NAME,
    position=11,
    description="plain text 'User: ... / Assistant: ...'",
    documentation=(
        "`User: …` / `Assistant: …` lines (also `Human:`, `AI:`, `System:`, `Tool:`); "
        "whitespace is trimmed, line endings normalised, runs of blank lines cut to one, "
        "Markdown left alone"
    ),
    parse=parse_plain_text,
    recognition=Recognition(text=_claims_text),
    label="Plain text conversation log",
)


__all__ = ["parse_plain_text", "preprocess_conversation"]
