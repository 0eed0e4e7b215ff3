"""Ready-to-inject context for agents (docs/search.md, "Context for a prompt";
"Context Compression").

The sessions most relevant to the query are found with the hybrid search (grouped by session)
and written as this Markdown::

    ## Relevant Past Discussions

    ### Session: 2025-01-15 - Architect (Winston) - create-architecture
    Relevance: 85%

    <excerpt>

Compression goes by levels, per session: its summary and **key** messages, else
its **summary**, else one **line** (title or the summary's first sentence). Which messages
are key is decided across sessions (``search/excerpts.py``): each match brings a window (the
one before it, usually the question it answers, and the one after it), best match first
wherever it is, a session's frame (heading and summary) paid with its first window; the
sessions left without messages get their summary or a line while the budget lasts.
Assembly never goes over the budget. Messages are cut only between paragraphs and never
inside a fenced code block. (A first design gave the first session in full and later ones only
their summary; spending the budget on the best matches of every session instead raised the
share of LoCoMo's evidence turns in the context: ``bench/locomo.py`` measures it.)

Other apps add their own sections (``search/context_sections.py``: memories adds the
relevant decisions, open findings and preferences). They share the budget: when sessions
are relevant too, the sections may take up to ``SECTIONS_SHARE`` of it, and the sessions
the rest; each section goes before the transcript excerpts when it is at least as
relevant as the most relevant session, after them otherwise.

Without a query, the context is "where we are": the sections' current state (recent
decisions, open findings, preferences) and the latest sessions' summaries, newest first.

Tokens are counted with the embedding model's WordPiece tokenizer
(``sessions/embedding/tokens.py``);
LLM tokenizers count English text within about ±15% of it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from django.db.models import Q

from search import context_sections, excerpts
from search.context_sections import Section, SectionRequest
from search.service import (
    SearchRequest,
    SessionHit,
    search,
    searched_filters,
    sessions_with_entity,
)
from sessions.embedding.tokens import count_tokens
from sessions.filters import Filters
from sessions.forget.read_counts import record_access
from sessions.models import Message, Session
from teams.access import Access

DEFAULT_MAX_TOKENS = 4000
HEADING = "## Relevant Past Discussions"
LATEST_HEADING = "## Latest Sessions"
SECTIONS_SHARE = 0.5  # of the budget, at most, for other apps' sections beside sessions
MESSAGE_SHARE = 0.25  # of the budget, at most, for one message (cut between paragraphs)
HITS_PER_SESSION = 8  # matches asked of search per session, each a window of messages
GAP = "…"  # between messages of a session that are not next to each other
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
    sections: list[Section] = field(default_factory=list)


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
    """The context for ``query``; without one (blank), "where we are" (``current_state``)."""
    filters = filters or Filters()
    if not query.strip():
        return current_state(
            access,
            filters=filters,
            max_sessions=max_sessions,
            max_tokens=max_tokens,
            touch=touch,
            include_archived=include_archived,
        )
    result = search(
        access,
        SearchRequest(
            query,
            filters=filters,
            limit=max_sessions,
            group_by_session=True,
            hits_per_session=HITS_PER_SESSION,
            min_relevance=min_relevance,
            include_archived=include_archived,
        ),
    )
    ranked = sorted(
        result.sessions, key=lambda s: (-s.relevance, -s.session.started_at.timestamp())
    )
    extra = _sections(
        access, query, filters, max_tokens, bool(ranked), min_relevance, include_archived, touch
    )
    blocks = _session_blocks(ranked, _left(max_tokens, extra, HEADING), max_tokens)
    top = blocks[0].relevance if blocks else 0.0
    before = [s.markdown for s in extra if s.relevance >= top]
    after = [s.markdown for s in extra if s.relevance < top]
    sessions = [HEADING, *(b.text for b in blocks)] if blocks else []
    return _assembled([*before, *sessions, *after], blocks, extra, max_tokens, touch)


def current_state(
    access: Access,
    *,
    filters: Filters,
    max_sessions: int,
    max_tokens: int,
    touch: bool,
    include_archived: bool,
) -> Context:
    """ "Where we are", to resume work: the sections' current state, then the latest
    sessions, newest first, each as its summary (or one line)."""
    latest = sessions_with_entity(access, searched_filters(filters, include_archived), max_sessions)
    extra = _sections(access, "", filters, max_tokens, bool(latest), 0.0, include_archived, touch)
    budget = _left(max_tokens, extra, LATEST_HEADING)
    blocks: list[ContextBlock] = []
    for hit in latest:
        block = _latest_block(hit.session, budget)
        if block is None:
            break
        blocks.append(block)
        budget -= block.tokens
    sessions = [LATEST_HEADING, *(b.text for b in blocks)] if blocks else []
    parts = [*(s.markdown for s in extra), *sessions]
    return _assembled(parts, blocks, extra, max_tokens, touch)


def _sections(
    access: Access,
    query: str,
    filters: Filters,
    max_tokens: int,
    with_sessions: bool,
    min_relevance: float,
    include_archived: bool,
    touch: bool,
) -> list[Section]:
    share = SECTIONS_SHARE if with_sessions else 1.0
    return context_sections.sections(
        SectionRequest(
            access=access,
            query=query,
            filters=filters,
            agent=filters.agent,
            budget=int(max_tokens * share),
            min_relevance=min_relevance,
            include_archived=include_archived,
            touch=touch,
        )
    )


def _left(max_tokens: int, extra: list[Section], heading: str) -> int:
    """Tokens left for sessions under ``heading`` once the sections are in."""
    return max_tokens - sum(s.tokens for s in extra) - tokens_of(heading)


def _session_blocks(ranked: list[SessionHit], budget: int, max_tokens: int) -> list[ContextBlock]:
    """The sessions' blocks, in ``ranked`` order: each framed by its summary, with the
    messages ``search/excerpts.py`` chooses, best match first across sessions; a session
    left without messages gets its summary or one line while the budget lasts."""
    if budget <= 0 or not ranked:
        return []
    blocks: dict[int, ContextBlock] = {}
    rest = list(range(len(ranked)))
    frames = {i: _frame(ranked[i]) for i in rest}
    matches = sorted(
        ((i, h.message.seq, h.score) for i in rest for h in ranked[i].hits),
        key=lambda m: (-m[2], m[0], m[1]),
    )
    found = excerpts.windows([(i, seq) for i, seq, _ in matches])
    shown = _shown_messages(ranked, found, max_tokens)
    texts = list(shown.items())
    costs = dict(zip((k for k, _ in texts), count_tokens([t for _, (_, t) in texts]), strict=True))
    frame_costs = {i: tokens_of("\n\n" + "\n\n".join(frames[i])) for i in rest}
    chosen = excerpts.allocate(found, costs, frame_costs, budget, tokens_of(GAP))
    for i in rest:
        if i in chosen:
            lines = [shown[(i, seq)] for seq in sorted(chosen[i])]
            blocks[i] = _key_block(ranked[i], frames[i], lines)
            budget -= blocks[i].tokens
    for position, i in enumerate(j for j in rest if j not in chosen):
        later = sum(1 for j in rest[position + 1 :] if j not in chosen)
        block = _framed_block(ranked[i], budget - min(LINE_TOKENS * later, budget // 4))
        if block is None:
            break
        blocks[i] = block
        budget -= block.tokens
    return [blocks[i] for i in sorted(blocks)]


def _frame(hit: SessionHit) -> list[str]:
    """A key block's heading and summary."""
    session = hit.session
    head = session_heading(session, hit.relevance)
    return [head, f"Summary: {session.summary}"] if session.summary else [head]


def _shown_messages(
    ranked: list[SessionHit], found: list[excerpts.Window], max_tokens: int
) -> dict[tuple[int, int], tuple[Message, str]]:
    """(session position, seq) → the message and its text as shown, for every message of
    ``found``'s windows that exists and has text. A message is cut between paragraphs to at
    most ``MESSAGE_SHARE`` of the budget, so one huge tool output cannot take it all."""
    wanted: dict[int, set[int]] = {}
    for w in found:
        wanted.setdefault(w.session, set()).update({w.seq, *w.neighbours})
    position = {ranked[i].session.pk: i for i in wanted}
    condition = Q(pk__in=[])
    for i, seqs in wanted.items():
        condition |= Q(session_id=ranked[i].session.pk, seq__in=sorted(seqs))
    shown = {}
    for m in Message.objects.filter(condition):
        text = _message_line(m, int(max_tokens * MESSAGE_SHARE))
        if text:
            shown[(position[m.session_id], m.seq)] = (m, text)
    return shown


def _key_block(hit: SessionHit, frame: list[str], shown: list[tuple[Message, str]]) -> ContextBlock:
    lines, previous = [], None
    for m, text in shown:
        if previous is not None and m.seq != previous + 1:
            lines.append(GAP)
        lines.append(text)
        previous = m.seq
    text = "\n\n".join([*frame, *lines])
    seqs = [m.seq for m, _ in shown]
    return ContextBlock(hit.session, hit.relevance, "key", text, tokens_of("\n\n" + text), seqs)


def _latest_block(session: Session, budget: int) -> ContextBlock | None:
    head = session_heading(session)
    for body in (f"Summary: {session.summary}" if session.summary else "", _one_line(session)):
        if not body:
            continue
        text = f"{head}\n\n{body}"
        tokens = tokens_of("\n\n" + text)
        if tokens <= budget:
            return ContextBlock(
                session, 1.0, "summary" if body.startswith("Summary") else "line", text, tokens
            )
    return None


def _assembled(
    parts: list[str],
    blocks: list[ContextBlock],
    extra: list[Section],
    max_tokens: int,
    touch: bool,
) -> Context:
    if not parts:
        return Context("", 0, max_tokens, [])
    markdown = "\n\n".join(parts) + "\n"
    if touch and blocks:
        record_access(b.session.pk for b in blocks)
    return Context(markdown, tokens_of(markdown), max_tokens, blocks, extra)


def session_heading(session: Session, relevance: float | None = None) -> str:
    """``### Session: <date> - <Agent> (<Persona>) - <workflow>`` and its relevance line."""
    agent = session.agent_name.replace("-", " ").title()
    if session.agent_persona:
        agent += f" ({session.agent_persona})"
    line = f"### Session: {session.started_at:%Y-%m-%d} - {agent} - {session.workflow or 'none'}"
    if relevance is not None:
        line += f"\nRelevance: {round(relevance * 100)}%"
    return line


def _framed_block(hit: SessionHit, budget: int) -> ContextBlock | None:
    """A session without messages: its summary, or one line, whichever fits ``budget``."""
    for level in ("summary", "line"):
        block = _render(hit, level)
        if block is not None and block.tokens <= budget:
            return block
    return None


def _render(hit: SessionHit, level: str) -> ContextBlock | None:
    """The session as its ``summary`` (None without one) or as one ``line``."""
    session = hit.session
    if level == "summary" and not session.summary:
        return None
    body = f"Summary: {session.summary}" if level == "summary" else _one_line(session)
    text = f"{session_heading(session, hit.relevance)}\n\n{body}"
    return ContextBlock(session, hit.relevance, level, text, tokens_of("\n\n" + text))


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
            lines.append(GAP)
        lines.append(f"**{_speaker(m)}:** {m.content.strip()}")
        previous = m.seq
    return "\n\n".join(lines)


def _message_line(message: Message, max_tokens: int) -> str:
    """``**<speaker>:** <text>``, the text cut between paragraphs to ``max_tokens``."""
    content = message.content.strip()
    if not content:
        return ""
    line = f"**{_speaker(message)}:** {content}"
    if tokens_of(line) <= max_tokens:
        return line
    return fit_paragraphs(line, max_tokens)


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
    """Resuming one session (docs/search.md, "Searching memories"): its summary, topics and last
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
