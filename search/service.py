"""Hybrid search over messages: the one entry point the API, the UI and the context
builder use. See ``keyword.py``, ``semantic.py`` and ``ranking.py`` for the parts."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field, replace

from django.db import connection

from search import (
    aliases,
    asked_for,
    extra_keys,
    keyword,
    learned,
    query_intent,
    ranking,
    semantic,
    speakers,
    temporal,
    tuning,
)
from search.filters import whole_session_where
from search.snippets import Snippet, snippets
from search.speed import parallel
from sessions.filters import Filters
from sessions.models import KEYWORD_VECTORS, SEARCH_CONFIG, Lifecycle, Message, Session
from teams.access import Access

logger = logging.getLogger(__name__)

MODES = ("hybrid", "semantic", "keyword")
MAX_LIMIT = 100
HITS_PER_SESSION = 3


@dataclass
class SearchRequest:
    query: str
    mode: str = "hybrid"
    filters: Filters = field(default_factory=Filters)
    limit: int = 10
    min_relevance: float = 0.0
    group_by_session: bool = False
    hits_per_session: int = HITS_PER_SESSION  # when grouping: a session's best hits kept
    mmr: bool = False
    recency: bool = False
    # Archived sessions' messages are left out unless asked for; they are found by keyword
    # only (their message vectors are dropped when they are archived).
    include_archived: bool = False
    # Other apps' keys to messages (memories → their evidence): None follows the
    # SEARCH_MEMORY_KEYS setting (search/extra_keys.py).
    memory_keys: bool | None = None


@dataclass
class MessageHit:
    message: Message
    session: Session
    relevance: float
    score: float
    similarity: float | None
    keyword_coverage: float
    snippet: Snippet


@dataclass
class SessionHit:
    session: Session
    relevance: float
    hits: list[MessageHit]


@dataclass
class SearchResult:
    hits: list[MessageHit]
    sessions: list[SessionHit]
    vector_path: str  # "exact", "team-hnsw", "quantized", "hnsw" or "none"
    took_ms: float


def search(access: Access, request: SearchRequest) -> SearchResult:
    started = time.perf_counter()
    filters, mode = searched_filters(request.filters, request.include_archived), request.mode
    documents = keyword.scope_documents(access, filters)
    pool = max(tuning.MIN_POOL, request.limit * (10 if request.group_by_session else 5))
    # Names the project's people are called by also find their messages (search/aliases.py).
    named = aliases.expansions(access, request.query)
    # The keyword side runs on its own connection while this thread embeds the query and
    # scans vectors (search/speed/parallel.py).
    keyword_side = parallel.beside(
        _keyword_side,
        request.query,
        access,
        filters,
        pool,
        documents,
        mode != "semantic",
        aliases.keyword_alternatives(named),
    )
    vector_path = "none"
    candidates: dict[int, ranking.Candidate] = {}

    vector = None
    if mode != "keyword":
        vector = semantic.query_vector(aliases.semantic_text(request.query, named))
        vector_path = semantic.vector_path(access, documents)
        nearest = semantic.candidates(vector, access, filters, pool, documents)
        for rank, (message_id, hit) in enumerate(nearest.items(), start=1):
            candidates[message_id] = ranking.Candidate(
                message_id, hit.chunk_id, hit.session_id, hit.similarity, rank_vector=rank
            )
    kquery, matches, idfs = keyword_side.result()
    if mode != "semantic":
        for rank, (message_id, score) in enumerate(matches.items(), start=1):
            c = candidates.setdefault(
                message_id, ranking.Candidate(message_id, session_id=score.session_id)
            )
            c.rank_keyword, c.keyword_score, c.coverage = rank, score.score, score.coverage
    if extra_keys.enabled(request.memory_keys):
        keys = extra_keys.candidates(access, request.query, filters, pool)
        for rank, (message_id, session_id) in enumerate(keys.items(), start=1):
            c = candidates.setdefault(
                message_id, ranking.Candidate(message_id, session_id=session_id)
            )
            c.rank_extra = rank
    # What each candidate is (its kind and author) and its session's lifecycle, read on a
    # second connection while this one completes each side's measures.
    intent = query_intent.intent_of(request.query)
    facts = parallel.beside(
        _candidate_facts, list(candidates), _quoted_phrases(intent), intent.asks_when
    )
    if mode == "hybrid":
        # Each side's measure for the other side's finds, so relevance is complete: the
        # keyword scores on a second connection while this one computes the distances.
        missing_keywords = [c.message_id for c in candidates.values() if c.rank_keyword is None]
        keyword_scores = parallel.beside(keyword.scores_for, kquery, idfs, missing_keywords)
        missing_vectors = [c.message_id for c in candidates.values() if c.similarity is None]
        for message_id, hit in semantic.distances_for(vector, missing_vectors).items():
            candidates[message_id].chunk_id = hit.chunk_id
            candidates[message_id].similarity = hit.similarity
        for message_id, score in keyword_scores.result().items():
            candidates[message_id].keyword_score = score.score
            candidates[message_id].coverage = score.coverage

    # Both sides say which session a message is in; a session deleted since is dropped when
    # the chosen messages are loaded.
    kinds, quoted_in_output, lifecycles = facts.result()
    for message_id, facts_of_one in kinds.items():
        c = candidates[message_id]
        c.kind, c.author, c.first_person, c.question, c.says_when, c.role, c.length = facts_of_one
    if quoted_in_output:
        intent = replace(intent, wants_output=True)
    for message_id, key in _copy_keys(list(candidates.values())).items():
        candidates[message_id].copy_key = key
    ranked = order(
        list(candidates.values()),
        mode,
        intent,
        request.query,
        {e.speaker for e in named},
        lifecycles,
        recency=request.recency,
    )
    if request.mmr:
        vectors = semantic.chunk_vectors([c.chunk_id for c in ranked if c.chunk_id])
        ranked = ranking.mmr(ranked, vectors, request.limit * HITS_PER_SESSION)
    ranked = ranking.without_copies(ranked)
    # The score that orders is the one shown (to 4 places) and filtered on.
    ranked = [c for c in ranked if round(c.relevance, 4) >= request.min_relevance]

    if request.group_by_session:
        chosen_groups = ranking.group(ranked, request.limit, request.hits_per_session)
        chosen = [c for group in chosen_groups for c in group]
    else:
        chosen = ranked[: request.limit]

    # The snippets on a second connection while this one loads the messages.
    spans = {c.message_id: c.chunk_id for c in chosen}
    snippets_beside = parallel.beside(snippets, list(spans.items()), kquery.any_term)
    messages = _load_messages([c.message_id for c in chosen])
    texts = snippets_beside.result()
    hits = {
        c.message_id: _hit(c, messages[c.message_id], texts)
        for c in chosen
        if c.message_id in messages
    }
    sessions = []
    if request.group_by_session:
        # Grouped, the flat list too goes best first (a group's third hit can be below the
        # next group's first).
        hits = dict(sorted(hits.items(), key=lambda item: -item[1].relevance))
        for group in chosen_groups:
            group_hits = [hits[c.message_id] for c in group if c.message_id in hits]
            if not group_hits:
                continue
            sessions.append(
                SessionHit(group_hits[0].session, max(h.relevance for h in group_hits), group_hits)
            )
    took = (time.perf_counter() - started) * 1000
    logger.debug(
        "search %r mode=%s path=%s hits=%d in %.1f ms",
        request.query[:80],
        mode,
        vector_path,
        len(hits),
        took,
    )
    return SearchResult(list(hits.values()), sessions, vector_path, took)


def order(
    candidates: list[ranking.Candidate],
    mode: str,
    intent: query_intent.QueryIntent,
    query: str,
    aliased: set[str],
    lifecycles: dict[int, tuple[str, float]],
    *,
    recency: bool = False,
) -> list[ranking.Candidate]:
    """The candidates best first, each with the relevance shown: the one score and the
    lifts of what the question asks (``ranking``, ``speakers``, ``temporal``, ``asked_for``),
    or, with ``SEARCH_LEARNED_RANKING`` in hybrid mode, the learned ranker
    (``search/learned.py``); then the sessions' lifecycle."""
    if mode == "hybrid" and learned.enabled():
        named = learned.named_authors(candidates, query, aliased)
        ranked = learned.rank(candidates, intent, named)
        return ranking.adjust_for_lifecycle(ranked, lifecycles, recency=recency)
    ranked = ranking.score(candidates, mode, intent)
    ranked = ranking.adjust_for_lifecycle(ranked, lifecycles, recency=recency)
    ranked = _speaker_focus(ranked, query, aliased)
    ranked = temporal.lift(ranked, intent)
    return asked_for.lift(ranked, intent)


def searched_filters(filters: Filters, include_archived: bool) -> Filters:
    """What a search looks through: archived sessions only when asked for (or when the
    ``lifecycle`` filter names them)."""
    if include_archived or filters.lifecycle == Lifecycle.ARCHIVED:
        return filters
    return replace(filters, exclude_archived=True)


def _keyword_side(
    text: str,
    access: Access,
    filters: Filters,
    pool: int,
    documents: int,
    ranked: bool,
    alternatives: tuple[tuple[str, str], ...] = (),
) -> tuple[keyword.KeywordQuery, dict[int, keyword.KeywordScore], list[float]]:
    """The query's lexemes, and (when ``ranked``) its best keyword matches and their IDFs."""
    kquery = keyword.parse(text, alternatives)
    if not ranked:
        return kquery, {}, []
    matches, idfs = keyword.candidates(kquery, access, filters, pool, documents)
    return kquery, matches, idfs


def _speaker_focus(
    ranked: list[ranking.Candidate], query: str, aliased: set[str]
) -> list[ranking.Candidate]:
    """Other authors' candidates lowered when the query names a speaker, by name or by a
    learned alias (``aliased``: search/aliases.py), and the speaker's self-statements
    lifted; the changed relevance is the one shown, so the order stays the score's
    (search/speakers.py)."""
    if not ranked or (tuning.OTHERS_FACTOR == 1.0 and tuning.SELF_LIFT == 0.0):
        return ranked
    authors = {c.author for c in ranked if c.author}
    named = speakers.named(query, authors) | (aliased & authors)
    if not named:
        return ranked
    focused = speakers.focus(
        ranked, lambda c: c.relevance, lambda c: c.author, named, states_self=_states_self
    )
    for c, score in focused:
        c.relevance = score
    return [c for c, _ in focused]


def _states_self(c: ranking.Candidate) -> bool:
    """A self-statement (search/speakers.py): a first-person word, and no question."""
    return c.first_person and not (tuning.SELF_NOT_QUESTION and c.question)


def _load_messages(message_ids: list[int]) -> dict[int, Message]:
    rows = (
        Message.objects.filter(id__in=message_ids, session__deleted_at__isnull=True)
        .select_related("session", "session__project", "session__project__team")
        .defer(
            "content",
            *KEYWORD_VECTORS,
            "metadata",
            "session__embedding",
            "session__metadata",
        )
    )
    return {m.id: m for m in rows}


def _quoted_phrases(intent: query_intent.QueryIntent) -> list[str]:
    """The question's quoted phrases that, found in tool output or a console line, make it
    ask for output (none when it already does)."""
    return [p.lower() for p in intent.quoted] if not intent.wants_output else []


def _candidate_facts(
    message_ids: list[int], phrases: list[str], asks_when: bool = False
) -> tuple[
    dict[int, tuple[str, str, bool, bool, bool, str, int]], bool, dict[int, tuple[str, float]]
]:
    """In one query on the primary keys: each message's kind, author (``""`` for tool
    messages, never a named speaker), whether its first 300 characters hold a first-person
    word and whether it is a question (a short one ending with a question mark:
    search/speakers.py), whether it holds a time expression (search/temporal.py; only with
    ``asks_when``), its role (search/asked_for.py) and its length in bytes (read from the
    row's header: a long message is not decompressed); whether a quoted ``phrases`` occurs
    in one that is tool output or a console line; and each of their sessions' (lifecycle,
    decay priority)."""
    if not message_ids:
        return {}, False, {}
    quoted_sql = " OR ".join("strpos(lower(m.content), %s) > 0" for _ in phrases) or "false"
    # Only a question that asks when needs to know which candidates say when.
    says_when = f"m.search_vector @@ to_tsquery('{SEARCH_CONFIG}', %s)" if asks_when else "false"
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT m.id, m.kind, CASE WHEN m.role = 'tool' THEN '' ELSE m.author END,"
            f" m.kind IN ('tool_output', 'console') AND ({quoted_sql}),"
            " s.id, s.lifecycle, s.decay_priority,"
            " m.role <> 'tool' AND left(m.content, 300) ~* %s,"
            " m.role <> 'tool' AND octet_length(m.content) <= %s AND right(m.content, 8) ~ %s,"
            f" {says_when}, m.role, octet_length(m.content)"
            " FROM agent_sessions_message m JOIN agent_sessions_session s ON s.id = m.session_id"
            " WHERE m.id = ANY(%s)",
            [
                *phrases,
                speakers.FIRST_PERSON,
                speakers.QUESTION_MAX_BYTES,
                speakers.QUESTION_END,
                *([temporal.TIME_QUERY] if asks_when else []),
                message_ids,
            ],
        )
        rows = cursor.fetchall()
    kinds = {row[0]: (row[1], row[2], row[7], row[8], row[9], row[10], row[11]) for row in rows}
    quoted_in_output = any(row[3] for row in rows)
    lifecycles = {row[4]: (row[5], row[6]) for row in rows}
    return kinds, quoted_in_output, lifecycles


def _copy_keys(candidates: list[ranking.Candidate]) -> dict[int, str]:
    """The copy key (role, author, digest of the content) of the candidates that may be
    copies (``ranking.copy_suspects``; their kinds must be known); only their content is
    read, and only when there are some."""
    suspects = [c.message_id for c in ranking.copy_suspects(candidates)]
    if not suspects:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, role || ':' || author || ':' || md5(content)"
            " FROM agent_sessions_message WHERE id = ANY(%s)",
            [suspects],
        )
        return dict(cursor.fetchall())


def _hit(c: ranking.Candidate, message: Message, texts: dict[int, Snippet]) -> MessageHit:
    return MessageHit(
        message=message,
        session=message.session,
        relevance=round(c.relevance, 4),
        score=c.relevance,
        similarity=None if c.similarity is None else round(c.similarity, 4),
        keyword_coverage=round(c.coverage, 4),
        snippet=texts.get(c.message_id, Snippet("")),
    )


def sessions_with_entity(access: Access, filters: Filters, limit: int) -> list[SessionHit]:
    """Search by entities: sessions that touched an entity (``filters.entity``
    and/or ``filters.entity_type``), most recent first."""
    where = whole_session_where(access, filters)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT s.id FROM agent_sessions_session s WHERE {where.sql}"
            " ORDER BY s.started_at DESC, s.id DESC LIMIT %s",
            [*where.params, limit],
        )
        ids = [row[0] for row in cursor.fetchall()]
    by_id = Session.objects.select_related("project", "project__team").in_bulk(ids)
    return [SessionHit(by_id[i], 1.0, []) for i in ids if i in by_id]
