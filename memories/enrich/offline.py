"""The offline extractor: rules over a session's own messages (no LLM, no network)."""

from __future__ import annotations

from memories.capture.record import MemoryDraft
from sessions.models import Message, Session


def extract(session: Session, messages: list[Message]) -> list[MemoryDraft]:
    return []
