"""Keyword retrieval: PostgreSQL full-text search over each message and its context (the
two messages before it and its date: ``sessions/neighbours.py``), ranked BM25-style.

PostgreSQL's own ``ts_rank`` has no notion of how rare a word is, so a question's "what" and
"did" would weigh as much as its "kubernetes". Here each query lexeme gets an inverse
document frequency computed over the searched scope (``ln(1 + (N − df + ½)/(df + ½))``, as in
BM25), and a message scores ``Σ idf(t) · ts_rank(message, t)`` — ts_rank of one lexeme grows
with its frequency and saturates, normalised by document length (flag 1), which is BM25's
shape. Everything runs in SQL on the GIN index; only matching rows are ranked.

Query syntax: a plain question matches any of its words (OR), because a natural-language
question almost never has all its words in one message. When the query uses web-search
operators (``"a phrase"``, ``-word``, ``or``), matching follows them exactly
(``websearch_to_tsquery``, which never fails on malformed input) and ranking is the same.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from django.db import connection

from search.filters import Filters, Scope, message_where, session_where
from sessions.models import SEARCH_CONFIG

MAX_TERMS = 32
# What a message is ranked on: its own words (weight A) and its context's (sessions/
# neighbours.py; weight D), a context word counting CONTEXT_WEIGHT of an own word, so that
# of a question and its answer, the one that holds the words ranks first. On LoCoMo's tuning
# conversations (0-4) 0.75 did best: turn recall@10 0.771 (1.0: 0.761, 0.5: 0.765).
DOCUMENT = "(setweight(m.search_vector, 'A') || coalesce(m.context_vector, ''::tsvector))"
CONTEXT_WEIGHT = 0.75
WEIGHTS = f"'{{{CONTEXT_WEIGHT}, 0, 0, 1}}'::float4[]"  # ts_rank's {D, C, B, A}
_OPERATORS = re.compile(r'"|(?:^|\s)-\w|\s+or\s+', re.IGNORECASE)


@dataclass(frozen=True)
class KeywordQuery:
    text: str
    terms: tuple[str, ...]  # lexemes, as the english configuration stems them
    strict: bool  # the query uses web-search operators

    @property
    def empty(self) -> bool:
        return not self.terms

    @property
    def any_term(self) -> str | None:
        """tsquery text matching any of the lexemes (also what snippets highlight)."""
        return " | ".join(_quote(t) for t in self.terms) or None

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


def parse(text: str) -> KeywordQuery:
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT lexeme FROM unnest(to_tsvector('{SEARCH_CONFIG}', %s)) "
            "ORDER BY positions[1] LIMIT %s",
            [text, MAX_TERMS],
        )
        terms = tuple(row[0] for row in cursor.fetchall())
    return KeywordQuery(text=text, terms=terms, strict=bool(_OPERATORS.search(text)))


@dataclass(frozen=True)
class KeywordScore:
    score: float  # Σ idf·ts_rank; comparable within one query only
    coverage: float  # idf-weighted share of the query's lexemes present, 0..1


def term_idfs(query: KeywordQuery, scope: Scope, filters: Filters, documents: int) -> list[float]:
    """IDF of each query lexeme over the messages in scope (``documents`` of them)."""
    if query.empty:
        return []
    where = message_where(scope, filters)
    match_sql, match_params = query.match_sql
    counts = ", ".join(f"count(*) FILTER (WHERE {DOCUMENT} @@ %s::tsquery)" for _ in query.terms)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {counts} FROM agent_sessions_message m "
            "JOIN agent_sessions_session s ON s.id = m.session_id "
            f"WHERE {match_sql} AND {where.sql}",
            [*(_quote(t) for t in query.terms), *match_params, *where.params],
        )
        frequencies = cursor.fetchone()
    idfs = []
    for df in frequencies:
        n = max(documents, df)
        idfs.append(math.log(1 + (n - df + 0.5) / (df + 0.5)))
    return idfs


def _score_sql(query: KeywordQuery, idfs: list[float]) -> tuple[str, str, list]:
    """(score expression, coverage expression, params for both, in that order)."""
    score = " + ".join(
        f"%s::float8 * ts_rank({WEIGHTS}, {DOCUMENT}, %s::tsquery, 1)" for _ in query.terms
    )
    covered = " + ".join(
        f"CASE WHEN {DOCUMENT} @@ %s::tsquery THEN %s::float8 ELSE 0 END" for _ in query.terms
    )
    total = sum(idfs) or 1.0
    params = []
    for term, idf in zip(query.terms, idfs, strict=True):
        params += [idf, _quote(term)]
    for term, idf in zip(query.terms, idfs, strict=True):
        params += [_quote(term), idf / total]
    return score, covered, params


def candidates(
    query: KeywordQuery, scope: Scope, filters: Filters, idfs: list[float], limit: int
) -> dict[int, KeywordScore]:
    """The ``limit`` best-scoring messages, best first (dicts keep insertion order)."""
    if query.empty:
        return {}
    where = message_where(scope, filters)
    match_sql, match_params = query.match_sql
    score, covered, score_params = _score_sql(query, idfs)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT m.id, {score} AS score, {covered} AS coverage "
            "FROM agent_sessions_message m JOIN agent_sessions_session s ON s.id = m.session_id "
            f"WHERE {match_sql} AND {where.sql} "
            "ORDER BY score DESC, m.id LIMIT %s",
            [*score_params, *match_params, *where.params, limit],
        )
        return {row[0]: KeywordScore(row[1], row[2]) for row in cursor.fetchall()}


def scores_for(
    query: KeywordQuery, idfs: list[float], message_ids: list[int]
) -> dict[int, KeywordScore]:
    """Scores of given messages (found by the vector side), 0 where nothing matches."""
    if query.empty or not message_ids:
        return {}
    score, covered, score_params = _score_sql(query, idfs)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT m.id, {score}, {covered} FROM agent_sessions_message m WHERE m.id = ANY(%s)",
            [*score_params, message_ids],
        )
        return {row[0]: KeywordScore(row[1], row[2]) for row in cursor.fetchall()}


def scope_documents(scope: Scope, filters: Filters) -> int:
    """Messages in scope (from the sessions' counts: cheap at any size)."""
    where = session_where(scope, filters)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT coalesce(sum(s.message_count), 0) FROM agent_sessions_session s "
            f"WHERE {where.sql}",
            where.params,
        )
        return int(cursor.fetchone()[0])
