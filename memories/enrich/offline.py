"""The offline extractor: rules over a session's own messages (no LLM, no network).

Each stated sentence (``sentences.py``) is offered to the rules of each type in turn
(``rules/``: a decision (stated, or a choice of a plan) before a finding before a learning
before a preference before a fact) and becomes at most one memory, linked to its message with
the sentence as the quote.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import Any

from memories.capture.record import Evidence, MemoryDraft
from memories.enrich.rules import (
    Match,
    decisions,
    facts,
    findings,
    learnings,
    plans,
    preferences,
)
from memories.enrich.sentences import Kind, Statement, kind_of, statements
from memories.models import MemoryScope, Origin
from sessions.enrich.entities import extract_from_text
from sessions.enrich.text import content_words
from sessions.enrich.transcript import attr
from sessions.models import Message, Session

RULES = (
    decisions.match,
    plans.match,
    findings.match,
    learnings.match,
    preferences.match,
    facts.match,
)
MAX_TAGS = 8
KIND_SAMPLE = 200
_TAGGED_ENTITIES = ("FILE", "PACKAGE")


def matches(
    session: Any, messages: Sequence[Any], kind: Kind | None = None
) -> list[tuple[Statement, Match]]:
    """Every (statement, match) of ``messages``; pure, no database (the bench uses it)."""
    found = []
    for statement in statements(session, messages, kind):
        if statement.role == "assistant" and not (statement.tools or statement.chat):
            continue  # an assistant answering a chat gives advice, not the project's memory
        for rule in RULES:
            result = rule(statement)
            if result is not None:
                found.append((statement, result))
                break
    return found


def extract(session: Session, messages: Sequence[Message]) -> list[MemoryDraft]:
    topics = list(session.topics or [])
    kind = session_kind(session)
    return [
        draft_of(session, statement, found, topics)
        for statement, found in matches(session, messages, kind)
    ]


def session_kind(session: Session) -> Kind:
    """The session's kind from its opening messages (whether people chat is plain from the
    first ones), and whether an agent is at work in it anywhere (``sentences.at_work``)."""
    opening = list(
        Message.objects.of_session(session)
        .filter(removed_at__isnull=True)
        .order_by("seq")
        .only("role", "author", "tool_name", "metadata", "content")[:KIND_SAMPLE]
    )
    kind = kind_of(opening, session)
    if not kind.tools and Message.objects.of_session(session).filter(role="tool").exists():
        kind = Kind(chat=kind.chat, tools=True)
    return kind


def draft_of(session: Any, statement: Statement, found: Match, topics: list[str]) -> MemoryDraft:
    return MemoryDraft(
        type=found.type,
        content=found.content,
        session=session,
        details=found.details,
        topic=found.topic,
        tags=tags_of(statement.sentence, topics),
        confidence=found.confidence,
        severity=found.severity,
        agent=statement.speaker,
        scope=MemoryScope.PROJECT,
        origin=Origin.EXTRACTOR,
        extractor="offline",
        occurred_at=attr(statement.message, "timestamp", None) or None,
        evidence=[Evidence(statement.message, statement.sentence)],
    )


def tags_of(sentence: str, topics: list[str]) -> list[str]:
    """The session's topics the sentence is about, and the files and packages it names."""
    words = content_words(sentence)
    tags = [t for t in topics if content_words(t) and content_words(t) <= words]
    for kind, value, _start, _end in extract_from_text(sentence):
        if kind in _TAGGED_ENTITIES:
            tags.append(PurePosixPath(value).name if kind == "FILE" else value)
    return list(dict.fromkeys(t.lower() for t in tags if t))[:MAX_TAGS]
