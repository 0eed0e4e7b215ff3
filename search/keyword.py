"""Keyword retrieval: PostgreSQL full-text search over each message and its context (the
two messages before it and its date: ``sessions/capture/keyword_context.py``), ranked BM25-style.

PostgreSQL's own ``ts_rank`` has no notion of how rare a word is, so a question's "what" and
"did" would weigh as much as its "kubernetes". Here each query lexeme gets an inverse
document frequency computed over the searched scope (``ln(1 + (N − df + ½)/(df + ½))``, as in
BM25), and a message scores ``Σ idf(t) · ts_rank(message, t)`` — ts_rank of one lexeme grows
with its frequency and saturates, normalised by document length (flag 1), which is BM25's
shape. Everything runs in SQL on the GIN index; only matching rows are ranked.

Query syntax: a plain question matches any of its words (OR), because a natural-language
question almost never has all its words in one message. When the query uses web-search
operators (``"a phrase"``, ``-word``), matching follows them exactly
(``websearch_to_tsquery``, which never fails on malformed input) and ranking is the same.

Symbols: PostgreSQL's text-search parser keeps words and numbers only, so "🚀", "✅" or "→"
have no lexeme and could never be found. A query with no lexeme at all but with such tokens
(``symbols``: whitespace-separated, holding no letter or digit) falls back to a plain
substring match (``strpos``) over the scope's messages. No index helps there (pg_trgm, too,
keeps letters and digits only), so it reads the text of the scope's ``SYMBOL_SCAN_MESSAGES``
most recently stored messages only, filtered by team and filters like every search (most of
its time goes to finding the latest ids; bench/search_speed.py measures it). A message
scores the number of the query's symbols it holds. A query with a lexeme never takes this
path, so word search and its plans are unchanged; a stop word alone ("the") has letters, so
it is no symbol either.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass

from django.db import connection

from search import tuning
from search.filters import message_where, session_where, team_condition
from search.speed import one_trip
from sessions.capture.keyword_context import RANKING_DOCUMENT
from sessions.filters import Filters
from sessions.models import SEARCH_CONFIG
from teams.access import Access

MAX_TERMS = 32
# Past this many messages in scope, word statistics are estimated and ranking is pooled (see
# candidates): counting and ranking every match costs time in proportion to the messages
# (bench/search_speed.py measures it), too slow for the biggest scopes.
EXACT_STATS_MAX_DOCS = 2_000
STATS_CACHE_SECONDS = 300
DOCUMENTS_CACHE_SECONDS = 30
COMMON_SHARE = 0.05
POOL_TERMS = 4
POOL_PER_TERM = 200
RARE_FINDS_ENOUGH = 10
# A symbol-only query reads at most this many of the scope's latest messages (see above).
SYMBOL_SCAN_MESSAGES = 20_000
# What a message is ranked on: its own words (weight A) and its context's (sessions/capture/
# keyword_context.py; weight D), a context word counting ``tuning.CONTEXT_WEIGHT`` of an own
# word, so that of a question and its answer, the one that holds the words ranks first. Capture
# stores that
# document (``ranking_vector``); a row stored before it had one gets it built here.
DOCUMENT = f"coalesce(m.ranking_vector, {RANKING_DOCUMENT.format(m='m')})"
# How a rare word's pool is read: from its GIN bitmap only. Any other plan (walking the team's
# index, the table, each session's messages, or a bitmap of the team's messages) tests
# messages' words one by one until it has POOL_PER_TERM matches, reading each long message's
# tsvector out of TOAST. The planner prices that test at cpu_operator_cost, a hundredth of
# what it costs here (bench/search_real.py shows the plans), so the other plans are turned
# off and the operator's price raised. The GIN bitmap reads no tsvector: a plain lexeme needs
# no recheck. The pools are an array (an init plan), so the ranking around them fetches its
# rows by id (a bitmap on the primary key) under the same settings. A common word's pool keeps
# the planner's choice: its matches are dense, so a walk stops early.
BITMAP_PLAN = {
    "enable_indexscan": "off",
    "enable_seqscan": "off",
    "enable_nestloop": "off",
    "cpu_operator_cost": "0.25",
}
# Quotes and a leading minus make a query strict; a bare "or" does not: "did we pick A or B?"
# is a question, and a plain query already matches any of its words.
_OPERATORS = re.compile(r'"|(?:^|\s)-\w')


@dataclass(frozen=True)
class KeywordQuery:
    text: str
    terms: tuple[str, ...]  # lexemes, as the english configuration stems them
    strict: bool  # the query uses web-search operators
    symbols: tuple[str, ...] = ()  # only when there is no lexeme: tokens of no letter/digit
    # What a lexeme also matches, as tsquery text: an alias's speaker by their display name
    # (search/aliases.py). Matched and weighted as that one word.
    alternatives: tuple[tuple[str, str], ...] = ()

    @property
    def empty(self) -> bool:
        return not self.terms and not self.symbols

    @property
    def any_term(self) -> str | None:
        """tsquery text matching any of the lexemes (also what snippets highlight)."""
        return " | ".join(self.term_queries) or None

    @property
    def term_queries(self) -> tuple[str, ...]:
        """Each lexeme as tsquery text, with its alternatives: ``('kate' | 'katherin')``."""
        return tuple(self.term_query(t) for t in self.terms)

    def term_query(self, lexeme: str) -> str:
        others = [f"({q})" for t, q in self.alternatives if t == lexeme]
        return f"({' | '.join([_quote(lexeme), *others])})" if others else _quote(lexeme)

    @property
    def match_sql(self) -> tuple[str, list]:
        """SQL condition on ``m`` deciding which messages match, with its params: any word
        in the message or its context; web-search syntax applies to the message's own text."""
        if self.strict:
            return (
                f"m.search_vector @@ websearch_to_tsquery('{SEARCH_CONFIG}', %s)",
                [self.text],
            )
        return "(m.search_vector @@ %s::tsquery OR m.context_vector @@ %s::tsquery)", [
            self.any_term,
            self.any_term,
        ]


def _quote(lexeme: str) -> str:
    """A lexeme as a tsquery literal (taken as is: no second stemming)."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def parse(text: str, alternatives: tuple[tuple[str, str], ...] = ()) -> KeywordQuery:
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT lexeme FROM unnest(to_tsvector('{SEARCH_CONFIG}', %s)) "
            "ORDER BY positions[1] LIMIT %s",
            [text, MAX_TERMS],
        )
        terms = tuple(row[0] for row in cursor.fetchall())
    return KeywordQuery(
        text=text,
        terms=terms,
        strict=bool(_OPERATORS.search(text)),
        symbols=() if terms else symbols_of(text),
        alternatives=tuple(a for a in alternatives if a[0] in terms),
    )


def symbols_of(text: str) -> tuple[str, ...]:
    """The query's tokens with no letter or digit ("🚀", "->"), as typed (without the
    quotes of web-search syntax), each once."""
    tokens = text.replace('"', " ").split()
    symbols = (t for t in tokens if not any(c.isalnum() for c in t))
    return tuple(dict.fromkeys(symbols))[:MAX_TERMS]


@dataclass(frozen=True)
class KeywordScore:
    score: float  # Σ idf·ts_rank; comparable within one query only
    coverage: float  # idf-weighted share of the query's lexemes present, 0..1
    session_id: int


def idf(documents: int, frequency: int) -> float:
    """BM25's inverse document frequency of a lexeme found in ``frequency`` of ``documents``
    (``IDF_SQL`` is the same in SQL, for frequencies counted inside a statement)."""
    n = max(documents, frequency)
    return math.log(1 + (n - frequency + 0.5) / (frequency + 0.5))


IDF_SQL = "ln(1 + (greatest({n}, {f}) - {f} + 0.5) / ({f} + 0.5))"


def estimated_idfs(query: KeywordQuery, documents: int) -> list[float]:
    """IDFs from PostgreSQL's column statistics (``estimated_shares``), for scopes too big to
    count in: counting every match of a common word in a huge scope takes seconds."""
    shares = estimated_shares(query.terms)
    for i, term in enumerate(query.terms):
        for other in (q for t, q in query.alternatives if t == term):
            # A phrase is as common as its rarest word; the alternatives add up.
            shares[i] = min(1.0, shares[i] + min(estimated_shares(_lexemes_of(other)) or [0]))
    return [idf(documents, round(share * documents)) for share in shares]


def _lexemes_of(tsquery: str) -> tuple[str, ...]:
    return tuple(m.replace("''", "'") for m in re.findall(r"'((?:[^']|'')*)'", tsquery))


_stats_cache: dict = {"at": -math.inf, "shares": {}, "floor": 0.0}


def estimated_shares(terms: tuple[str, ...]) -> list[float]:
    """Share of messages containing each lexeme, from ``pg_stats`` (what ANALYZE keeps of
    the tsvector columns: their ~1,000 most common lexemes with frequencies). A lexeme not
    among them is rarer than the rarest listed: it gets half of that."""
    now = time.monotonic()
    if now - _stats_cache["at"] > STATS_CACHE_SECONDS:
        shares: dict[str, float] = {}
        floor = 1.0
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT most_common_elems::text::text[], most_common_elem_freqs FROM pg_stats"
                " WHERE tablename = 'agent_sessions_message'"
                " AND attname IN ('search_vector', 'context_vector')"
            )
            for elements, freqs in cursor.fetchall():
                if not elements or not freqs:
                    continue
                for element, freq in zip(elements, freqs, strict=False):
                    shares[element] = max(shares.get(element, 0.0), freq)
                floor = min(floor, freqs[len(elements)])  # the minimum, after the list
        _stats_cache.update(at=now, shares=shares, floor=floor / 2 if shares else 0.001)
    return [_stats_cache["shares"].get(t, _stats_cache["floor"]) for t in terms]


def _weights() -> str:
    """ts_rank's weights {D, C, B, A}: a context word (D) counts ``CONTEXT_WEIGHT`` of an own
    word (A)."""
    return f"'{{{tuning.CONTEXT_WEIGHT}, 0, 0, 1}}'::float4[]"


def _score_sql(
    query: KeywordQuery, weights: list[str], document: str = "d.doc"
) -> tuple[str, str, list]:
    """(score expression, coverage expression, params for both, in that order) over
    ``document``, each query lexeme weighted by the SQL expression at its place in ``weights``
    (a literal IDF, or a column holding one)."""
    score = " + ".join(f"{w} * ts_rank({_weights()}, {document}, %s::tsquery, 1)" for w in weights)
    covered = " + ".join(
        f"CASE WHEN {document} @@ %s::tsquery THEN {w} ELSE 0 END" for w in weights
    )
    coverage = f"({covered}) / greatest({' + '.join(weights)}, 1e-9)"
    terms = list(query.term_queries)
    return score, coverage, [*terms, *terms]


def score_sql(query: KeywordQuery, idfs: list[float], document: str) -> tuple[str, str, list]:
    """The same score and coverage over another tsvector column (memories are ranked and
    their relevance measured like messages), with the given IDFs."""
    return _score_sql(query, _literal(idfs), document)


def _literal(idfs: list[float]) -> list[str]:
    return [f"{float(x)!r}::float8" for x in idfs]


def _ranks_sql(query: KeywordQuery) -> tuple[str, list]:
    """Select-list columns ``r0, r1, …``: the ts_rank of message ``m``'s document for each
    query lexeme (with their params). Each rank is computed once per message and gives both
    the score and the coverage (a lexeme is in the document exactly when its rank is above
    0): every function call on a stored document reads it out of TOAST anew."""
    terms = list(query.term_queries)
    columns = ", ".join(
        f"ts_rank({_weights()}, {DOCUMENT}, %s::tsquery, 1) AS r{i}" for i in range(len(terms))
    )
    return columns, terms


def _fused_sql(weights: list[str], ranks: str) -> tuple[str, str]:
    """(score, coverage) from the ranks ``{ranks}.r0, r1, …`` of ``_ranks_sql``, each lexeme
    weighted by the SQL expression at its place in ``weights``: ``_score_sql``'s arithmetic,
    in the same order (the same floats)."""
    score = " + ".join(f"{w} * {ranks}.r{i}" for i, w in enumerate(weights))
    covered = " + ".join(
        f"CASE WHEN {ranks}.r{i} > 0 THEN {w} ELSE 0 END" for i, w in enumerate(weights)
    )
    return score, f"({covered}) / greatest({' + '.join(weights)}, 1e-9)"


# Ranks computed in a subquery that the planner must not merge into the query around it
# (OFFSET 0): merged, each rank would be computed again for the score and the coverage.
RANKED = "SELECT m.id, m.session_id, {ranks} FROM agent_sessions_message m WHERE {where} OFFSET 0"


def candidates(
    query: KeywordQuery, access: Access, filters: Filters, limit: int, documents: int
) -> tuple[dict[int, KeywordScore], list[float]]:
    """The ``limit`` best-scoring messages, best first (dicts keep insertion order), and the
    IDF of each query lexeme they were scored with.

    In scopes up to ``EXACT_STATS_MAX_DOCS`` messages (and for web-search syntax), every
    matching message is ranked, with document frequencies counted over the matches in the
    same statement (one pass over them, not one to count and one to rank). Beyond, the IDFs
    are estimated (``estimated_idfs``) and the messages to rank come from the query's rarer
    lexemes (at most ``POOL_PER_TERM`` messages each, from up to ``POOL_TERMS`` lexemes found
    in under ``COMMON_SHARE`` of the messages): a word in a third of a million messages cannot
    pick the best ten, and ranking all its matches would take seconds. When the rare words'
    pools hold fewer than ``RARE_FINDS_ENOUGH`` messages, the least common of the common
    words adds its pool."""
    if query.empty:
        return {}, []
    if not query.terms:
        return _symbol_matches(query, access, filters, limit), []
    if documents <= EXACT_STATS_MAX_DOCS or query.strict:
        return _ranked_with_counts(query, access, filters, limit, documents)
    idfs = estimated_idfs(query, documents)
    return _ranked_from_pools(query, access, filters, idfs, limit), idfs


def _ranked_with_counts(
    query: KeywordQuery, access: Access, filters: Filters, limit: int, documents: int
) -> tuple[dict[int, KeywordScore], list[float]]:
    where = message_where(access, filters)
    teams, team_params = team_condition(access, "m")
    match_sql, match_params = query.match_sql
    terms = list(query.term_queries)
    ranks, rank_params = _ranks_sql(query)
    counts = ", ".join(f"count(*) FILTER (WHERE d.r{i} > 0) AS f{i}" for i in range(len(terms)))
    weights = ", ".join(
        IDF_SQL.format(n=f"{int(documents)}::float8", f=f"f{i}") + f" AS w{i}"
        for i in range(len(terms))
    )
    score, coverage = _fused_sql([f"w.w{i}" for i in range(len(terms))], "d")
    frequencies = ", ".join(f"f.f{i}" for i in range(len(terms)))
    sql = (
        f"WITH d AS MATERIALIZED (SELECT m.id, m.session_id, {ranks}"
        " FROM agent_sessions_message m JOIN agent_sessions_session s ON s.id = m.session_id"
        f" WHERE {teams} AND {match_sql} AND {where.sql}),"
        f" f AS MATERIALIZED (SELECT {counts} FROM d),"
        f" w AS MATERIALIZED (SELECT {weights} FROM f)"
        f" SELECT d.id, {score} AS score, {coverage} AS coverage, d.session_id, {frequencies}"
        " FROM d, w, f ORDER BY score DESC, d.id LIMIT %s"
    )
    params = [*rank_params, *team_params, *match_params, *where.params, limit]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    found = {row[0]: KeywordScore(*row[1:4]) for row in rows}
    frequencies_found = rows[0][4:] if rows else [0] * len(terms)  # no match: no frequency
    return found, [idf(documents, f) for f in frequencies_found]


def _ranked_from_pools(
    query: KeywordQuery, access: Access, filters: Filters, idfs: list[float], limit: int
) -> dict[int, KeywordScore]:
    by_rarity = sorted(zip(idfs, query.terms, strict=True), reverse=True)
    common_idf = math.log(1 + (1 - COMMON_SHARE) / COMMON_SHARE)
    rare = [t for weight, t in by_rarity if weight >= common_idf][:POOL_TERMS]
    common = [t for weight, t in by_rarity if weight < common_idf]
    found = {}
    if rare:
        found = _rank_pools(query, access, filters, idfs, rare, limit, bitmaps_only=True)
    if len(found) < min(limit, RARE_FINDS_ENOUGH) and common:
        # (Almost) no message holds a rare word (or the rare words are unknown): the least
        # common of the common ones adds its pool. Its index lookup is the costly one, so
        # only then.
        found = _rank_pools(query, access, filters, idfs, [*rare, common[0]], limit)
    return found


def _rank_pools(
    query: KeywordQuery,
    access: Access,
    filters: Filters,
    idfs: list[float],
    pool_terms: list[str],
    limit: int,
    bitmaps_only: bool = False,
) -> dict[int, KeywordScore]:
    """Rank the messages of the pools of ``pool_terms`` (each at most ``POOL_PER_TERM``)."""
    where = message_where(access, filters)
    teams, team_params = team_condition(access, "m")
    pools = " UNION ".join(
        "(SELECT m.id FROM agent_sessions_message m"
        " JOIN agent_sessions_session s ON s.id = m.session_id"
        f" WHERE {teams}"
        " AND (m.search_vector @@ %s::tsquery OR m.context_vector @@ %s::tsquery)"
        f" AND {where.sql} LIMIT {POOL_PER_TERM})"
        for _ in pool_terms
    )
    pool_params = []
    for term in pool_terms:
        term_query = query.term_query(term)
        pool_params += [*team_params, term_query, term_query, *where.params]
    ranks, rank_params = _ranks_sql(query)
    score, coverage = _fused_sql(_literal(idfs), "r")
    ranked = RANKED.format(ranks=ranks, where=f"m.id = ANY(ARRAY({pools}))")
    sql = (
        f"SELECT r.id, {score} AS score, {coverage} AS coverage, r.session_id"
        f" FROM ({ranked}) r ORDER BY score DESC, r.id LIMIT %s"
    )
    plan = BITMAP_PLAN if bitmaps_only else {}
    rows = one_trip.fetch_all(sql, [*rank_params, *pool_params, limit], plan)
    return {row[0]: KeywordScore(*row[1:]) for row in rows}


def scores_for(
    query: KeywordQuery, idfs: list[float], message_ids: list[int]
) -> dict[int, KeywordScore]:
    """Scores of given messages (found by the vector side), 0 where nothing matches."""
    if query.empty or not message_ids:
        return {}
    if not query.terms:
        return _symbol_scores(query, message_ids)
    ranks, rank_params = _ranks_sql(query)
    score, coverage = _fused_sql(_literal(idfs), "r")
    ranked = RANKED.format(ranks=ranks, where="m.id = ANY(%s)")
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT r.id, {score}, {coverage}, r.session_id FROM ({ranked}) r",
            [*rank_params, message_ids],
        )
        return {row[0]: KeywordScore(*row[1:]) for row in cursor.fetchall()}


def _symbols_found_sql(query: KeywordQuery, alias: str) -> tuple[str, list]:
    """How many of the query's symbols ``alias``'s content holds (SQL, with params)."""
    found = " + ".join(f"(strpos({alias}.content, %s) > 0)::int" for _ in query.symbols)
    return f"({found})", list(query.symbols)


def _symbol_matches(
    query: KeywordQuery, access: Access, filters: Filters, limit: int
) -> dict[int, KeywordScore]:
    """Best first: the messages among the scope's ``SYMBOL_SCAN_MESSAGES`` latest that hold
    most of the query's symbols (a symbol-only query: see the module's docstring)."""
    where = message_where(access, filters)
    teams, team_params = team_condition(access, "m")
    found, found_params = _symbols_found_sql(query, "hit")
    sql = (
        f"SELECT hit.id, {found} AS found, hit.session_id FROM agent_sessions_message hit"
        " WHERE hit.id = ANY(ARRAY(SELECT m.id FROM agent_sessions_message m"
        " JOIN agent_sessions_session s ON s.id = m.session_id"
        f" WHERE {teams} AND {where.sql} ORDER BY m.id DESC LIMIT {SYMBOL_SCAN_MESSAGES}))"
        f" AND {found} > 0 ORDER BY found DESC, hit.id DESC LIMIT %s"
    )
    params = [*found_params, *team_params, *where.params, *found_params, limit]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    return {
        message_id: KeywordScore(float(hits), hits / len(query.symbols), session_id)
        for message_id, hits, session_id in rows
    }


def _symbol_scores(query: KeywordQuery, message_ids: list[int]) -> dict[int, KeywordScore]:
    found, found_params = _symbols_found_sql(query, "hit")
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT hit.id, {found}, hit.session_id FROM agent_sessions_message hit"
            " WHERE hit.id = ANY(%s)",
            [*found_params, message_ids],
        )
        return {
            message_id: KeywordScore(float(hits), hits / len(query.symbols), session_id)
            for message_id, hits, session_id in cursor.fetchall()
        }


_documents_cache: dict[tuple, tuple[float, int]] = {}


def scope_documents(access: Access, filters: Filters) -> int:
    """Messages in scope (from the sessions' counts), remembered for ``STATS_CACHE_SECONDS``
    per scope and filters: summing a big team's session counts is not free; an IDF a few
    messages out of date costs nothing. The scope is the sessions the caller reads, so the
    person it reads as is part of the key: an owner's private messages must never size a
    teammate's IDFs or choose a teammate's vector path."""
    key = (access.team_ids, access.project_ids, access.person_id, filters)
    now = time.monotonic()
    cached = _documents_cache.get(key)
    if cached and now - cached[0] < DOCUMENTS_CACHE_SECONDS:
        return cached[1]
    where = session_where(access, filters)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT coalesce(sum(s.message_count), 0) FROM agent_sessions_session s "
            f"WHERE {where.sql}",
            where.params,
        )
        documents = int(cursor.fetchone()[0])
    if len(_documents_cache) > 10_000:
        _documents_cache.clear()
    _documents_cache[key] = (now, documents)
    return documents
