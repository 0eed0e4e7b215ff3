"""Ready-to-inject context for agents (seed 000 ``get_relevant_context``, seed 003
"Context Compression").

The sessions most relevant to the query are found with the hybrid search (grouped by session)
and written as seed 000's Markdown::

    ## Relevant Past Discussions

    ### Session: 2025-01-15 - Architect (Winston) - create-architecture
    Relevance: 85%

    <excerpt>

Compression follows seed 003's levels, richest first for the most relevant (most recent on
ties): the first session in **full** when that takes at most half the budget, else as its
summary and **key** messages (the matching messages, each with the one before it — usually
the question it answers); the following ones as **key** messages too while the budget allows,
then as **summary**, then as one **line** (title or the summary's first sentence), keeping
room for a line for each session still to come. Assembly stops at the budget. Messages are
cut only between paragraphs and never inside a fenced code block. (Seed 003 gives later
sessions only their summary; giving them their key messages while the budget lasts raised
the share of LoCoMo's evidence turns in the context: ``bench/locomo.py`` measures it.)

Tokens are counted with the embedding model's WordPiece tokenizer
(``sessions/embedding/tokens.py``);
LLM tokenizers count English text within about ±15% of it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from search.service import SearchRequest, SessionHit, search
from sessions.embedding.tokens import count_tokens
from sessions.filters import Filters
from sessions.forget.access import record_access
from sessions.models import Message, Session
from teams.access import Access

DEFAULT_MAX_TOKENS = 4000
HEADING = "## Relevant Past Discussions"
LEVELS = ("full", "key", "summary", "line")
FULL_SESSION_MAX_MESSAGES = 40
FULL_SHARE = 0.5  # a whole session may take at most this share of the budget
LINE_TOKENS = 40  # kept free for each session still to come (its heading and one line)
_FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass
class ContextBlock:
    session: Session
    relevance: float
    level: str
    text: str
    tokens: int
    message_seqs: list[int] = field(default_factory=list)


@dataclass
class Context:
    markdown: str
    tokens: int
    max_tokens: int
    blocks: list[ContextBlock]


def tokens_of(text: str) -> int:
    return count_tokens([text])[0] if text else 0


def build_context(
    access: Access,
    query: str,
    *,
    filters: Filters | None = None,
    max_sessions: int = 3,
    min_relevance: float = 0.3,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    touch: bool = True,
    include_archived: bool = False,
) -> Context:
    result = search(
        access,
        SearchRequest(
            query,
            filters=filters or Filters(),
            limit=max_sessions,
            group_by_session=True,
            min_relevance=min_relevance,
            include_archived=include_archived,
        ),
    )
    ranked = sorted(
        result.sessions, key=lambda s: (-s.relevance, -s.session.started_at.timestamp())
    )
    heading_tokens = tokens_of(HEADING)
    budget = max_tokens - heading_tokens
    blocks: list[ContextBlock] = []
    if budget > 0:
        for position, hit in enumerate(ranked):
            later = len(ranked) - position - 1
            reserve = min(LINE_TOKENS * later, budget // 4)
            block = _best_block(hit, position, budget - reserve, max_tokens)
            if block is None:
                break
            blocks.append(block)
            budget -= block.tokens
    if not blocks:
        return Context("", 0, max_tokens, [])
    markdown = "\n\n".join([HEADING, *(b.text for b in blocks)]) + "\n"
    if touch:
        record_access(b.session.pk for b in blocks)
    return Context(markdown, tokens_of(markdown), max_tokens, blocks)


def session_heading(session: Session, relevance: float | None = None) -> str:
    """``### Session: <date> - <Agent> (<Persona>) - <workflow>`` and its relevance line."""
    agent = session.agent_name.replace("-", " ").title()
    if session.agent_persona:
        agent += f" ({session.agent_persona})"
    line = f"### Session: {session.started_at:%Y-%m-%d} - {agent} - {session.workflow or 'none'}"
    if relevance is not None:
        line += f"\nRelevance: {round(relevance * 100)}%"
    return line


def _best_block(hit: SessionHit, position: int, budget: int, max_tokens: int):
    """The richest level this session may have at its position that fits ``budget``."""
    for level in LEVELS if position == 0 else LEVELS[1:]:
        block = _render(hit, level, budget)
        if block is None or block.tokens > budget:
            continue
        if level == "full" and block.tokens > max_tokens * FULL_SHARE:
            continue
        return block
    return None


def _render(hit: SessionHit, level: str, budget: int) -> ContextBlock | None:
    session = hit.session
    head = session_heading(session, hit.relevance)
    parts = [head]
    seqs: list[int] = []
    if level == "full":
        if session.message_count > FULL_SESSION_MAX_MESSAGES:
            return None
        messages = list(Message.objects.filter(session=session).order_by("seq"))
        seqs = [m.seq for m in messages]
        parts.append(_messages_text(messages))
    elif level in ("key", "summary"):
        if session.summary:
            parts.append(f"Summary: {session.summary}")
        if level == "key":
            messages = _key_messages(hit)
            seqs = [m.seq for m in messages]
            parts.append(_messages_text(messages, gaps=True))
    else:
        parts.append(_one_line(session))
    text = "\n\n".join(p for p in parts if p)
    tokens = tokens_of("\n\n" + text)
    if tokens > budget and level in ("full", "key"):
        # Keep whole paragraphs while they fit (never half a code block).
        text = fit_paragraphs(text, budget - 1)
        if not text.startswith(head):
            return None
        tokens = tokens_of("\n\n" + text)
    return ContextBlock(session, hit.relevance, level, text, tokens, seqs)


def _key_messages(hit: SessionHit) -> list[Message]:
    wanted = set()
    for h in hit.hits:
        wanted.update({h.message.seq - 1, h.message.seq})
    return list(
        Message.objects.filter(session=hit.session, seq__in=[s for s in wanted if s >= 0]).order_by(
            "seq"
        )
    )


def _speaker(message: Message) -> str:
    name = message.author or message.role.title()
    if message.tool_name:
        name += f" ({message.tool_name})" if message.role != "tool" else f" ← {message.tool_name}"
    return name


def _messages_text(messages: list[Message], *, gaps: bool = False) -> str:
    lines, previous = [], None
    for m in messages:
        if not m.content.strip():
            continue
        if gaps and previous is not None and m.seq != previous + 1:
            lines.append("…")
        lines.append(f"**{_speaker(m)}:** {m.content.strip()}")
        previous = m.seq
    return "\n\n".join(lines)


def _one_line(session: Session) -> str:
    text = session.title or session.summary.split(". ")[0] or "(no summary yet)"
    return text[:300]


def paragraphs(text: str) -> list[str]:
    """Blank-line separated paragraphs; a fenced code block is one paragraph, whatever it
    contains."""
    blocks, current, in_fence = [], [], False
    for line in text.split("\n"):
        if _FENCE.match(line):
            in_fence = not in_fence
        if not line.strip() and not in_fence:
            if current:
                blocks.append("\n".join(current))
                current = []
            continue
        current.append(line)
    if current:
        blocks.append("\n".join(current))
    return blocks


def fit_paragraphs(text: str, budget: int) -> str:
    """The leading whole paragraphs of ``text`` that fit ``budget`` tokens, and "[…]"."""
    kept: list[str] = []
    pieces = paragraphs(text)
    counts = count_tokens(["\n\n" + p for p in pieces])
    marker = tokens_of("\n\n[…]")
    used = marker
    for piece, n in zip(pieces, counts, strict=True):
        if used + n > budget:
            break
        kept.append(piece)
        used += n
    if len(kept) == len(pieces):
        return text
    return "\n\n".join([*kept, "[…]"]) if kept else ""


@dataclass
class Resume:
    session: Session
    messages: list[Message]
    markdown: str
    tokens: int


def resume(session: Session, last_n: int = 20) -> Resume:
    """Seed 003 ``load_context_for_session`` for one session: its summary, topics and last
    ``last_n`` messages, to pick the work up where it stopped."""
    messages = list(Message.objects.filter(session=session).order_by("-seq")[:last_n])[::-1]
    parts = [
        f"## Resuming session {session.public_id}" + (f": {session.title}" if session.title else "")
    ]
    parts.append(session_heading(session))
    if session.summary:
        parts.append(f"Summary: {session.summary}")
    if session.topics:
        parts.append("Topics: " + ", ".join(session.topics))
    if messages:
        parts.append(f"#### Last {len(messages)} of {session.message_count} messages")
        parts.append(_messages_text(messages, gaps=True))
    markdown = "\n\n".join(parts) + "\n"
    return Resume(session, messages, markdown, tokens_of(markdown))
