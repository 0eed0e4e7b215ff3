"""Snippets of matching messages with the query's words marked.

PostgreSQL's ``ts_headline`` picks the passages and marks the words (with the same stemming
as the search), inside the region of the message that matched: its best chunk when the
vector side found it, else the start of the message. The marks are two control characters
(removed from the text first), turned here into plain text plus character ranges, so the
API returns data and the UI escapes the text itself before adding ``<mark>``.

``ts_headline`` cuts where its own parser's tokens end, and a chunk's span starts wherever
the embedding tokenizer's window did: either can fall inside a word, a path or a redaction
marker (``[REDACTED:openai_key]``). So each passage is then fitted to whole
whitespace-separated words of the message: a word cut at a passage's edge is completed when
it is short (``COMPLETE_CHARS``), else left out, and a redaction marker is kept whole or left
out. An ellipsis stands wherever text was left out: between passages, and before or after
the snippet when the message goes on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from django.db import connection
from django.utils.html import escape

from sessions.capture.redaction import MARK
from sessions.models import SEARCH_CONFIG

START, STOP, BETWEEN = "\x01", "\x02", "\x03"
ELLIPSIS = "…"
REGION_CHARS = 20_000  # of a message without a chunk (keyword-only match, not yet embedded)
# Text read on each side of the region, to finish a word the region cuts (a word longer
# than this at an edge is left out instead).
COMPLETE_CHARS = 40
HEADLINE_OPTIONS = (
    f"StartSel={START}, StopSel={STOP}, MaxWords=45, MinWords=20, ShortWord=2, "
    f'MaxFragments=2, FragmentDelimiter="{BETWEEN}"'
)
# A redaction marker (sessions/capture/redaction.py writes them): "[REDACTED:" and a kind.
_MARKER = re.compile(re.escape(MARK).replace(re.escape("{}"), r"[^\]\s]*"))


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


def parse_marked(marked: str) -> tuple[str, list[tuple[int, int]]]:
    """The text of a marked passage and its marked ranges."""
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
    return "".join(text), highlights


@dataclass(frozen=True)
class Window:
    """What is known of a message around its snippet's region: ``text`` (the region and up
    to ``COMPLETE_CHARS`` on each side), whether it begins and ends where the message does,
    and where the region lies in it."""

    text: str
    message_start: bool
    message_end: bool
    region: tuple[int, int]


def fitted(window: Window, headline: str) -> Snippet:
    """The snippet of ``headline`` (``ts_headline`` over the window's region), each passage
    widened or narrowed to whole words of the window, with ellipses where text was cut."""
    spans: list[tuple[int, int, list[tuple[int, int]]]] = []
    cursor = window.region[0]
    for passage in headline.split(BETWEEN):
        text, marks = parse_marked(passage)
        at = window.text.find(text, cursor)
        if not text.strip() or at < 0:
            continue
        start, end = _whole_words(window, at, at + len(text))
        if start >= end:
            continue
        marks = [(at + s, at + e) for s, e in marks if start <= at + s and at + e <= end]
        if spans and start <= spans[-1][1]:  # overlapping passages join
            previous = spans.pop()
            start, marks = previous[0], previous[2] + marks
            end = max(end, previous[1])
        spans.append((start, end, marks))
        cursor = at + len(text)
    return _joined(window, spans)


def _joined(window: Window, spans: list[tuple[int, int, list[tuple[int, int]]]]) -> Snippet:
    parts: list[str] = []
    highlights: list[tuple[int, int]] = []
    length = 0
    for i, (start, end, marks) in enumerate(spans):
        cut_before = start > 0 or not window.message_start
        if i > 0 or cut_before:
            separator = f" {ELLIPSIS} " if i > 0 else f"{ELLIPSIS} "
            parts.append(separator)
            length += len(separator)
        # Leading/trailing spaces of a passage are dropped; offsets follow.
        piece = window.text[start:end]
        lead = len(piece) - len(piece.lstrip())
        piece = piece.strip()
        highlights += [(length + s - start - lead, length + e - start - lead) for s, e in marks]
        parts.append(piece)
        length += len(piece)
    if spans and (spans[-1][1] < len(window.text) or not window.message_end):
        parts.append(f" {ELLIPSIS}")
    return Snippet("".join(parts), highlights)


def _whole_words(window: Window, start: int, end: int) -> tuple[int, int]:
    """[start, end) moved to word boundaries of the window: a word cut at an edge is
    completed when it ends within ``COMPLETE_CHARS``, else left out; a redaction marker
    across an edge likewise."""
    text = window.text
    start = _edge(text, start, backwards=True, known=window.message_start)
    end = _edge(text, end, backwards=False, known=window.message_end)
    for marker in _MARKER.finditer(text):
        if marker.start() < start < marker.end():
            start = marker.end()
        if marker.start() < end < marker.end():
            end = marker.start()
    return start, end


def _edge(text: str, at: int, *, backwards: bool, known: bool) -> int:
    """The word boundary for an edge at ``at``: ``at`` itself when whitespace or the
    message's own start/end is beside it, else the cut word's start/end (``backwards``: a
    passage's start) when it is within ``COMPLETE_CHARS`` and inside the window, else past
    the cut word, into the passage. ``known``: the window's own edge on that side is the
    message's."""
    outer = 0 if backwards else len(text)
    if (at == outer and known) or _space_beside(text, at):
        return at
    if backwards:
        word_start = _last_space(text, at) + 1
        if at - word_start <= COMPLETE_CHARS and (word_start > 0 or known):
            return word_start
        return _next_space(text, at)
    word_end = _next_space(text, at)
    if word_end - at <= COMPLETE_CHARS and (word_end < len(text) or known):
        return word_end
    return _last_space(text, at) + 1


def _space_beside(text: str, at: int) -> bool:
    return (0 < at <= len(text) and text[at - 1].isspace()) or (
        at < len(text) and text[at].isspace()
    )


def _last_space(text: str, before: int) -> int:
    """Index of the last whitespace before ``before``, or -1."""
    for i in range(before - 1, -1, -1):
        if text[i].isspace():
            return i
    return -1


def _next_space(text: str, at: int) -> int:
    """Index of the first whitespace at or after ``at``, or len(text)."""
    for i in range(at, len(text)):
        if text[i].isspace():
            return i
    return len(text)


def snippets(pairs: list[tuple[int, int | None]], tsquery: str | None) -> dict[int, Snippet]:
    """Snippet per message id, for (message id, best chunk id or None) pairs."""
    if not pairs:
        return {}
    message_ids = [m for m, _ in pairs]
    chunk_ids = [c or 0 for _, c in pairs]
    with connection.cursor() as cursor:
        cursor.execute(
            _SQL,
            {
                "pad": COMPLETE_CHARS,
                "messages": message_ids,
                "chunks": chunk_ids,
                "region": REGION_CHARS,
                "query": tsquery,
                "options": HEADLINE_OPTIONS,
                "marks": START + STOP + BETWEEN,
            },
        )
        return {
            message_id: fitted(
                Window(
                    before + region + after,
                    message_start,
                    message_end,
                    (len(before), len(before) + len(region)),
                ),
                headline,
            )
            for message_id, before, region, after, message_start, message_end, headline in (
                cursor.fetchall()
            )
        }


# The region is the chunk's own text (its row holds it: a long message's content is never
# read, nor decompressed up to the chunk), with up to COMPLETE_CHARS on each side from the
# chunks before and after it, which overlap it. Without a chunk: the message's first
# REGION_CHARS characters, and COMPLETE_CHARS more. The CTEs are materialised so that each
# text is read once.
_CHUNK_BODY = "right({c}.text, {c}.char_end - {c}.char_start)"  # the chunk's text, no header
_SQL = (
    "WITH h AS MATERIALIZED (SELECT h.message_id, c.char_start, c.char_end, c.index,"
    f"  {_CHUNK_BODY.format(c='c')} AS body"
    " FROM unnest(%(messages)s::bigint[], %(chunks)s::bigint[]) AS h(message_id, chunk_id)"
    " LEFT JOIN agent_sessions_messagechunk c ON c.id = h.chunk_id),"
    " parts AS MATERIALIZED (SELECT h.message_id,"
    "  CASE WHEN p.char_end >= h.char_start THEN"
    f"   substr({_CHUNK_BODY.format(c='p')},"
    "    greatest(h.char_start - %(pad)s, p.char_start) - p.char_start + 1,"
    "    h.char_start - greatest(h.char_start - %(pad)s, p.char_start))"
    "  ELSE '' END AS before,"
    "  coalesce(h.body, left(s.raw, %(region)s)) AS region,"
    "  CASE WHEN h.body IS NULL THEN substr(s.raw, %(region)s + 1, %(pad)s)"
    f"   WHEN n.char_start <= h.char_end THEN substr({_CHUNK_BODY.format(c='n')},"
    "    h.char_end - n.char_start + 1, %(pad)s)"
    "   ELSE '' END AS after,"
    "  coalesce(h.char_start = 0, true) AS message_start,"
    "  CASE WHEN h.body IS NULL THEN char_length(s.raw) <= %(region)s + %(pad)s"
    "   ELSE n.id IS NULL END AS message_end"
    " FROM h"
    " LEFT JOIN agent_sessions_messagechunk p"
    "  ON p.message_id = h.message_id AND p.index = h.index - 1"
    " LEFT JOIN agent_sessions_messagechunk n"
    "  ON n.message_id = h.message_id AND n.index = h.index + 1"
    " LEFT JOIN LATERAL (SELECT left(m.content, %(region)s + %(pad)s + 1) AS raw"
    "  FROM agent_sessions_message m WHERE m.id = h.message_id AND h.body IS NULL) s ON true)"
    " SELECT parts.message_id, t.before, t.region, t.after, parts.message_start,"
    f"  parts.message_end, ts_headline('{SEARCH_CONFIG}', t.region,"
    "  coalesce(%(query)s::tsquery, ''::tsquery), %(options)s)"
    " FROM parts CROSS JOIN LATERAL (SELECT translate(parts.before, %(marks)s, '') AS before,"
    "  translate(parts.region, %(marks)s, '') AS region,"
    "  translate(parts.after, %(marks)s, '') AS after) t"
    " WHERE parts.region IS NOT NULL"
)
