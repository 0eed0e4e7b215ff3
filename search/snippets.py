"""Snippets of matching messages with the query's words marked.

PostgreSQL's ``ts_headline`` picks the passage and marks the words (with the same stemming
as the search), inside the region of the message that matched: its best chunk when the
vector side found it, else the start of the message. The marks are two control characters
(removed from the text first), turned here into plain text plus character ranges, so the
API returns data and the UI escapes the text itself before adding ``<mark>``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import connection
from django.utils.html import escape

from sessions.models import SEARCH_CONFIG

START, STOP = "\x01", "\x02"
REGION_CHARS = 20_000  # of a message without a chunk (keyword-only match, not yet embedded)
HEADLINE_OPTIONS = (
    f"StartSel={START}, StopSel={STOP}, MaxWords=45, MinWords=20, ShortWord=2, "
    'MaxFragments=2, FragmentDelimiter=" … "'
)


@dataclass
class Snippet:
    text: str
    highlights: list[tuple[int, int]] = field(default_factory=list)  # [start, end) in text

    def html(self) -> str:
        parts, last = [], 0
        for start, end in self.highlights:
            parts += [escape(self.text[last:start]), "<mark>", escape(self.text[start:end])]
            parts.append("</mark>")
            last = end
        parts.append(escape(self.text[last:]))
        return "".join(parts)


def parse_marked(marked: str) -> Snippet:
    text, highlights, position, opened = [], [], 0, None
    for ch in marked:
        if ch == START:
            opened = position
        elif ch == STOP and opened is not None:
            highlights.append((opened, position))
            opened = None
        else:
            text.append(ch)
            position += 1
    return Snippet("".join(text).strip(), _shift(highlights, "".join(text)))


def _shift(highlights, text: str) -> list[tuple[int, int]]:
    lead = len(text) - len(text.lstrip())
    return [(s - lead, e - lead) for s, e in highlights]


def snippets(pairs: list[tuple[int, int | None]], tsquery: str | None) -> dict[int, Snippet]:
    """Snippet per message id, for (message id, best chunk id or None) pairs."""
    if not pairs:
        return {}
    message_ids = [m for m, _ in pairs]
    chunk_ids = [c or 0 for _, c in pairs]
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT h.message_id, ts_headline('{SEARCH_CONFIG}', translate("
            "  CASE WHEN c.id IS NULL THEN left(m.content, %s)"
            "  ELSE substr(m.content, c.char_start + 1, c.char_end - c.char_start) END,"
            "  %s, ''), coalesce(%s::tsquery, ''::tsquery), %s)"
            " FROM unnest(%s::bigint[], %s::bigint[]) AS h(message_id, chunk_id)"
            " JOIN agent_sessions_message m ON m.id = h.message_id"
            " LEFT JOIN agent_sessions_messagechunk c ON c.id = h.chunk_id",
            [REGION_CHARS, START + STOP, tsquery, HEADLINE_OPTIONS, message_ids, chunk_ids],
        )
        return {row[0]: parse_marked(row[1]) for row in cursor.fetchall()}
