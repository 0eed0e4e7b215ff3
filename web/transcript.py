"""A page of a session's messages, shaped for reading: tool calls paired with their
results (same ``tool_call_id``), long content folded.

Messages are read by ``seq`` (keyset: ``seq > after``), never by offset, so the hundredth
page of a long session costs what the first does.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from sessions.models import KEYWORD_VECTORS, Message, MessageRole

PAGE_SIZE = 100
FOLD_CHARS = 4_000
FOLD_LINES = 60
PREVIEW_LINES = 12


@dataclass
class Entry:
    message: Message
    results: list[Message] = field(default_factory=list)  # a tool call's results

    @property
    def is_tool_call(self) -> bool:
        # A removed call is a tombstone of its own; its results are shown on their own.
        m = self.message
        is_call = m.role != MessageRole.TOOL and bool(m.tool_name or m.tool_call_id)
        return is_call and m.removed_at is None

    @property
    def is_tool_result(self) -> bool:
        return self.message.role == MessageRole.TOOL

    @property
    def kind(self) -> str:
        if self.is_tool_call:
            return "tool-call"
        if self.is_tool_result:
            return "tool-result"
        return self.message.role


def is_long(text: str) -> bool:
    return len(text or "") > FOLD_CHARS or (text or "").count("\n") > FOLD_LINES


def preview(text: str) -> str:
    lines = (text or "").splitlines()[:PREVIEW_LINES]
    return "\n".join(line[:300] for line in lines)


def code_language(text: str) -> str:
    """ "json" when the text is JSON (tool inputs often are), else "" (plain)."""
    stripped = (text or "").lstrip()
    if stripped[:1] in "{[" and len(stripped) < 200_000:
        try:
            json.loads(stripped)
        except ValueError:
            return ""
        return "json"
    return ""


@dataclass
class Page:
    entries: list[Entry]
    next_after: int | None  # seq to continue after, None at the end
    first_seq: int | None


def _columns(queryset):
    return queryset.defer(*KEYWORD_VECTORS)


def load_page(session, *, after: int = -1, limit: int = PAGE_SIZE) -> Page:
    base = _columns(Message.objects.of_session(session))
    rows = list(base.filter(seq__gt=after).order_by("seq")[: limit + 1])
    more = len(rows) > limit
    rows = rows[:limit]
    call_ids = {
        m.tool_call_id
        for m in rows
        if m.tool_call_id and m.role != MessageRole.TOOL and m.removed_at is None
    }
    result_ids = {m.tool_call_id for m in rows if m.tool_call_id and m.role == MessageRole.TOOL}
    # Results of this page's calls, wherever they are; and which of this page's results
    # belong to a call (shown with it, not on their own).
    results: dict[str, list[Message]] = {}
    if call_ids:
        for m in base.filter(role=MessageRole.TOOL, tool_call_id__in=call_ids).order_by("seq"):
            results.setdefault(m.tool_call_id, []).append(m)
    paired = set()
    if result_ids:
        paired = set(
            base.filter(tool_call_id__in=result_ids, removed_at__isnull=True)
            .exclude(role=MessageRole.TOOL)
            .values_list("tool_call_id", flat=True)
        )
    entries = []
    for m in rows:
        if m.role == MessageRole.TOOL and m.tool_call_id in paired:
            continue
        entry = Entry(m)
        if entry.is_tool_call:
            entry.results = results.get(m.tool_call_id, [])
        entries.append(entry)
    return Page(
        entries=entries,
        next_after=rows[-1].seq if more and rows else None,
        first_seq=rows[0].seq if rows else None,
    )
