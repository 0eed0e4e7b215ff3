"""The sentences the offline extractor reads: what a person or an agent stated in prose.

Tool calls and their output, injected preambles, code blocks, diffs and quoted lines are
left out (``sessions.enrich.text.prose_segments``), and so are sentences that do not state
anything: questions, hypotheticals ("maybe we should"), requests for permission.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from sessions.enrich.entities import extract_from_text
from sessions.enrich.summary.chat import is_chat_between_people
from sessions.enrich.text import prose_segments, split_sentences
from sessions.enrich.transcript import attr, is_injected

MIN_WORDS = 4
MAX_SENTENCE_CHARS = 500

_HYPOTHETICAL = re.compile(
    r"\b(maybe|perhaps|might|could|would|if|unless|whether|suppose|assuming|"
    r"should (we|i)|shall (we|i)|do you want|want me to|wonder|not sure|unsure|"
    r"probably|possibly|consider(ing)?|what about|how about|try to|let me know)\b",
    re.I,
)
_QUOTES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'})
# Narration of the next step ("Now let me read the file", "Next, I'll check the tests") and
# requests ("Can you also add …"): neither states anything that holds after the session.
_REPORTED_PLAN = re.compile(
    r"^((now|first|next|then|ok(ay)?|good|great|alright|perfect)[,.!]?\s+)*(let me|"
    r"i'?ll (now |first |also )?(check|look|read|run|start|open|search|inspect|explore|examine|"
    r"verify|review|trace|update|add|create|write|fix|investigate|see|find|go through))\b"
    r"|^(can|could|will|would) you\b",
    re.I,
)


@dataclass(frozen=True)
class Statement:
    """One sentence of one message, with who said it."""

    message: Any
    sentence: str
    speaker: str  # the person's name in a chat, else "user" / the agent's name
    role: str  # "user" or "assistant"
    chat: bool  # a conversation between people (LoCoMo-like), not an agent session
    tools: bool = False  # the session calls tools: an agent at work, not a conversation


def speaker_of(message: Any, session: Any, chat: bool) -> str:
    author = str(attr(message, "author") or "").strip()
    if chat and author:
        return author
    if attr(message, "role") == "assistant":
        return str(attr(session, "agent_name") or author or "assistant")
    return str(attr(session, "user_name") or "") or "user"


def plain(sentence: str) -> str:
    """Straight apostrophes, and no parentheses around the whole sentence."""
    sentence = sentence.translate(_QUOTES).strip()
    if sentence.startswith("(") and sentence.endswith(")"):
        sentence = sentence[1:-1].strip()
    return sentence


def is_stated(sentence: str) -> bool:
    """A declarative sentence: not a question, a hypothesis or an announcement of a step."""
    if sentence.rstrip().endswith("?") or "?" in sentence[-3:]:
        return False
    if len(sentence.split()) < MIN_WORDS or len(sentence) > MAX_SENTENCE_CHARS:
        return False
    return not (_HYPOTHETICAL.search(sentence) or _REPORTED_PLAN.search(sentence))


@dataclass(frozen=True)
class Kind:
    """What kind of session it is, read from all of its messages (an increment of a few
    messages does not show it)."""

    chat: bool  # a conversation between people (LoCoMo-like)
    tools: bool  # an agent at work (see ``at_work``)


# Transcripts only agents at work write, and what code talk is made of.
AGENT_FORMATS = {
    "claude_code",
    "codex",
    "aider",
    "anthropic_session",
    "conversation_md",
    "bmad_session",
}
CODE_SCAN_CHARS = 5000  # of each message: code talk shows early
CODE_ENTITIES = {"FILE", "FUNCTION", "CLASS", "ERROR", "COMMAND"}


def at_work(session: Any, messages: Sequence[Any]) -> bool:
    """An agent at work: it calls tools, or the session comes from an agent's own transcript, a
    workflow or an agent with a persona (an architect, a PM), or it talks about code (files,
    functions, errors, commands). A coding agent's session posted as plain messages has no tool
    calls, and is still work."""
    if any(attr(m, "role") == "tool" or attr(m, "tool_name") for m in messages):
        return True
    if attr(session, "source_format", "") in AGENT_FORMATS:
        return True
    if attr(session, "workflow", "none") not in ("", "none") or attr(session, "agent_persona", ""):
        return True
    return any(
        kind in CODE_ENTITIES
        for m in messages
        for kind, *_ in extract_from_text(str(attr(m, "content") or "")[:CODE_SCAN_CHARS])
    )


def kind_of(messages: Sequence[Any], session: Any = None) -> Kind:
    return Kind(chat=is_chat_between_people(messages), tools=at_work(session, messages))


def statements(
    session: Any, messages: Sequence[Any], kind: Kind | None = None
) -> Iterator[Statement]:
    """The stated sentences of ``messages`` (in order), who said them, and the message;
    ``kind`` is the whole session's (by default, read from ``messages``)."""
    kind = kind or kind_of(messages, session)
    chat, tools = kind.chat, kind.tools
    for message in messages:
        role = attr(message, "role")
        if role not in ("user", "assistant") or attr(message, "tool_name") or is_injected(message):
            continue
        speaker = speaker_of(message, session, chat)
        for segment in prose_segments(str(attr(message, "content") or "")):
            for sentence in split_sentences(segment):
                sentence = plain(sentence)
                if is_stated(sentence):
                    yield Statement(message, sentence, speaker, role, chat, tools)
