"""Vector retrieval: cosine distance over message chunks in pgvector.

Four paths, chosen from the size of the searched scope rather than left to the planner
(which on big tables flips between them and then under-fills filtered HNSW scans):

- **exact** for scopes up to ``EXACT_SCAN_MAX_CHUNKS`` messages (this and the other knobs
  named here: ``search/tuning.py``): every distance of the
  scope is computed. Recall is 1 by construction.
- **quantized** up to ``QUANTIZED_MAX_CHUNKS``: the scope's ``QUANTIZED_RERANK`` nearest
  chunks by Hamming distance between sign bits (``embedding_bits``, 48 bytes, read from a
  covering index without touching the 1.5 KB vectors), then exact cosine over those. With all
  filters in the first step, nothing is lost to them. Recall stays close to the exact scan's,
  much faster (``bench/search_speed.py`` measures both).
- **team-hnsw** for a big team with its own HNSW index (``search/speed/team_indexes.py``) when
  the scope is at least a ``1/HNSW_OVERFETCH`` share of it: as the HNSW path below, on the
  team's graph (faster than the quantized path for a big team; ``bench/search_speed.py``
  measures it), fetching only as many more chunks as the scope's share of the team calls for
  (``team_overfetch``).
- **HNSW** beyond that, with ``hnsw.iterative_scan = relaxed_order``, over the chunk table
  alone filtered by team (any join or second filter and the planner drops the index, many
  times slower), three times more than needed; the other
  filters apply after, and when they leave the page short the exact scan over what passes
  them runs instead — so a filter never returns fewer results than exist.

A message's distance is its best chunk's.

The scope is the messages the caller reads (``search/filters.py``): its size, which chooses
the path and the team graph's overfetch, counts only those, and every path keeps only those
before it chooses (the HNSW paths fetch from the graph, then filter, and fall back when the
unreadable ones leave the page short), so a teammate's private session never takes a place.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from django.db import connection

from search import tuning
from search.filters import message_where, team_condition
from search.speed import one_trip, team_indexes
from sessions.embedding.query import embed_query
from sessions.filters import Filters
from teams.access import Access


@dataclass(frozen=True)
class VectorHit:
    chunk_id: int
    distance: float  # cosine distance, 0..2
    session_id: int

    @property
    def similarity(self) -> float:
        return 1.0 - self.distance


@lru_cache(maxsize=256)
def query_vector(text: str) -> str:
    """The query's vector as a pgvector literal (cached: agents repeat their queries)."""
    return vector_literal(embed_query(text))


def vector_literal(vector: np.ndarray) -> str:
    return "[" + ",".join(f"{x:.6g}" for x in vector.tolist()) + "]"


def candidates(
    vector: str, access: Access, filters: Filters, limit: int, scope_messages: int
) -> dict[int, VectorHit]:
    """Up to ``limit`` nearest messages (by their best chunk), nearest first."""
    # Messages have ~1 chunk; ask for more chunks than messages so that a long message's
    # several chunks do not crowd others out.
    chunk_limit = limit * 2
    rows = None
    path = vector_path(access, scope_messages)
    if path == "hnsw":
        rows = _hnsw(vector, access, filters, chunk_limit, tuning.HNSW_OVERFETCH)
    elif path == "team-hnsw":
        overfetch = team_overfetch(access, filters, scope_messages)
        rows = _hnsw(vector, access, filters, chunk_limit, overfetch)
    if path == "quantized" or (path == "team-hnsw" and rows is None):
        rows = _quantized(vector, access, filters, chunk_limit)
    if rows is None:
        rows = _exact(vector, access, filters, chunk_limit)
    best: dict[int, VectorHit] = {}
    for chunk_id, message_id, session_id, distance in sorted(rows, key=lambda row: row[3]):
        best.setdefault(message_id, VectorHit(chunk_id, distance, session_id))
    return dict(list(best.items())[:limit])


def vector_path(access: Access, scope_messages: int) -> str:
    """Which path serves a scope of this many messages: "exact", "team-hnsw", "quantized"
    or "hnsw"."""
    if scope_messages <= tuning.EXACT_SCAN_MAX_CHUNKS:
        return "exact"
    if len(access.team_ids) == 1:
        team_messages = team_indexes.indexed_team_messages(access.team_ids[0])
        # The team's graph is scanned for HNSW_OVERFETCH times the chunks wanted, and the
        # scope's filters apply after: a scope under that share of the team would come short.
        if team_messages and scope_messages * tuning.HNSW_OVERFETCH >= team_messages:
            return "team-hnsw"
    return "quantized" if scope_messages <= tuning.QUANTIZED_MAX_CHUNKS else "hnsw"


def team_overfetch(access: Access, filters: Filters, scope_messages: int) -> float:
    """How many times the chunks wanted to read from a team's own graph: the team's messages
    per message in scope (a third of the team in scope: 3 times), with a margin for deleted
    sessions and uneven chunks per message, so a whole-team search does not walk three
    times the graph it needs (ef_search follows the fetch). A role filter, which
    the scope's count does not see, gets the full HNSW_OVERFETCH. When the guess comes up
    short, the quantized path runs instead (``candidates``)."""
    team_messages = team_indexes.indexed_team_messages(access.team_ids[0]) or 0
    if filters.narrows_messages or not scope_messages:
        return tuning.HNSW_OVERFETCH
    share = team_messages / scope_messages
    return min(tuning.HNSW_OVERFETCH, max(1.0, share) * tuning.TEAM_OVERFETCH_MARGIN)


def _quantized(vector: str, access: Access, filters: Filters, chunk_limit: int) -> list[tuple]:
    """Candidates by Hamming distance of sign bits from the covering team index (the session
    join applies the filters; the message table only when a filter is on messages), then
    their exact cosine distances."""
    where = message_where(access, filters)
    messages = (
        " JOIN agent_sessions_message m ON m.id = c.message_id" if filters.narrows_messages else ""
    )
    with connection.cursor() as cursor:
        cursor.execute(
            "WITH near AS MATERIALIZED ("
            " SELECT c.id FROM agent_sessions_messagechunk c"
            f" JOIN agent_sessions_session s ON s.id = c.session_id{messages}"
            f" WHERE c.team_id = ANY(%s) AND {where.sql}"
            " ORDER BY c.embedding_bits <~> binary_quantize(%s::vector) LIMIT %s)"
            " SELECT c.id, c.message_id, c.session_id, c.embedding <=> %s::vector AS distance"
            " FROM near JOIN agent_sessions_messagechunk c ON c.id = near.id"
            " ORDER BY distance LIMIT %s",
            [
                list(access.team_ids),
                *where.params,
                vector,
                max(tuning.QUANTIZED_RERANK, chunk_limit * 4),
                vector,
                chunk_limit,
            ],
        )
        return cursor.fetchall()


def _exact(vector: str, access: Access, filters: Filters, chunk_limit: int) -> list[tuple]:
    """Every chunk in scope, through the team/session indexes (``+ 0`` keeps the planner
    off the HNSW index, which serves only a bare ``<=>``)."""
    where = message_where(access, filters)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.id, c.message_id, c.session_id, c.embedding <=> %s::vector AS distance"
            " FROM agent_sessions_messagechunk c"
            " JOIN agent_sessions_session s ON s.id = c.session_id"
            " JOIN agent_sessions_message m ON m.id = c.message_id"
            f" WHERE c.team_id = ANY(%s) AND {where.sql}"
            " ORDER BY (c.embedding <=> %s::vector) + 0 LIMIT %s",
            [vector, list(access.team_ids), *where.params, vector, chunk_limit],
        )
        return cursor.fetchall()


def _hnsw(
    vector: str, access: Access, filters: Filters, chunk_limit: int, overfetch: float
) -> list[tuple] | None:
    """The index scan over the chunk table alone, filtered by team only (a join or a
    second filter makes the planner abandon the index), fetching ``overfetch`` times
    more; the other conditions (project, deleted, agent, …) apply after. None when they
    leave the page short: the scope that passes them is small, and the exact scan is cheap."""
    where = message_where(access, filters)
    fetch = math.ceil(chunk_limit * overfetch)
    teams, team_params = team_condition(access, "c")  # a team's own graph, when it has one
    ef_search = min(tuning.HNSW_EF_SEARCH_MAX, max(tuning.HNSW_EF_SEARCH, fetch))
    # The planner still prefers "team index + sort" for most big teams, which reads every
    # chunk of the team: make the sort look unaffordable.
    plan = {
        "hnsw.iterative_scan": "relaxed_order",
        "hnsw.ef_search": ef_search,
        "hnsw.max_scan_tuples": tuning.HNSW_MAX_SCAN_TUPLES,
        "enable_sort": "off",
    }
    rows = one_trip.fetch_all(
        "WITH nn AS MATERIALIZED ("
        " SELECT c.id, c.message_id, c.session_id, c.embedding <=> %s::vector AS distance"
        f" FROM agent_sessions_messagechunk c WHERE {teams}"
        " ORDER BY c.embedding <=> %s::vector LIMIT %s)"
        " SELECT nn.id, nn.message_id, nn.session_id, nn.distance FROM nn"
        " JOIN agent_sessions_session s ON s.id = nn.session_id"
        " JOIN agent_sessions_message m ON m.id = nn.message_id"
        f" WHERE {where.sql}",
        [vector, *team_params, vector, fetch, *where.params],
        plan,
    )
    return rows if len(rows) >= chunk_limit else None


def distances_for(vector: str, message_ids: list[int]) -> dict[int, VectorHit]:
    """Best-chunk distance of given messages (found by the keyword side)."""
    if not message_ids:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT DISTINCT ON (c.message_id) c.message_id, c.id,"
            " c.embedding <=> %s::vector AS d, c.session_id"
            " FROM agent_sessions_messagechunk c WHERE c.message_id = ANY(%s)"
            " ORDER BY c.message_id, d",
            [vector, message_ids],
        )
        return {row[0]: VectorHit(*row[1:]) for row in cursor.fetchall()}


def chunk_vectors(chunk_ids: list[int]) -> dict[int, np.ndarray]:
    """Vectors of given chunks (for MMR), as float32 arrays."""
    if not chunk_ids:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, embedding::real[] FROM agent_sessions_messagechunk WHERE id = ANY(%s)",
            [chunk_ids],
        )
        return {row[0]: np.asarray(row[1], dtype=np.float32) for row in cursor.fetchall()}
