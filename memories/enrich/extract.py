"""Which extractor reads a session: the offline rules by default; an OpenAI-compatible
endpoint when ``MEMORY_LLM_URL`` is set, falling back to the rules when it fails."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.conf import settings

from memories.capture.record import MemoryDraft
from memories.enrich import llm, offline
from sessions.models import Message, Session

logger = logging.getLogger(__name__)

OFFLINE, LLM, FALLBACK = "offline", "llm", "fallback"  # FALLBACK: the rules, the LLM failed


@dataclass
class Extracted:
    drafts: list[MemoryDraft]
    method: str
    note: str = ""  # why the LLM was not used, when it failed


def extract_drafts(session: Session, messages: list[Message]) -> Extracted:
    """The memories ``messages`` of ``session`` state, and the method that found them."""
    if settings.MEMORY_LLM_URL:
        try:
            drafts = llm.extract(
                session,
                messages,
                url=settings.MEMORY_LLM_URL,
                model=settings.MEMORY_LLM_MODEL,
                api_key=settings.MEMORY_LLM_API_KEY,
                timeout=settings.MEMORY_LLM_TIMEOUT_SECONDS,
            )
            return Extracted(drafts, LLM)
        except llm.LLMExtractionError as exc:
            logger.warning("LLM memory extraction of session %s failed: %s", session.pk, exc)
            return Extracted(offline.extract(session, messages), FALLBACK, f"LLM failed: {exc}")
    return Extracted(offline.extract(session, messages), OFFLINE)
