"""Vector retrieval: cosine distance over message chunks in pgvector.

Two paths, chosen from the size of the searched scope rather than left to the planner
(which at 1M rows flips between them and then under-fills filtered HNSW scans):

- **exact** for scopes up to ``EXACT_SCAN_MAX_CHUNKS``: the scope's chunks are found through
  the team/session indexes and every distance is computed. Recall is 1 by construction and
  a few thousand distances cost a few milliseconds.
- **HNSW** beyond that, with ``hnsw.iterative_scan = relaxed_order``: pgvector keeps scanning
  the graph until enough rows pass the filters (so a filter never returns fewer results than
  exist within ``hnsw.max_scan_tuples``), and the results are re-sorted by exact distance.

A message's distance is its best chunk's.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from django.db import connection, transaction

from search.filters import Filters, Scope, message_where
from sessions.embedding import embed

EXACT_SCAN_MAX_CHUNKS = 20_000
HNSW_EF_SEARCH = 100
HNSW_MAX_SCAN_TUPLES = 40_000


@dataclass(frozen=True)
class VectorHit:
    chunk_id: int
    distance: float  # cosine distance, 0..2

    @property
    def similarity(self) -> float:
        return 1.0 - self.distance


@lru_cache(maxsize=256)
def query_vector(text: str) -> str:
    """The query's vector as a pgvector literal (cached: agents repeat their queries)."""
    return vector_literal(embed([text])[0])


def vector_literal(vector: np.ndarray) -> str:
    return "[" + ",".join(f"{x:.6g}" for x in vector.tolist()) + "]"


def candidates(
    vector: str, scope: Scope, filters: Filters, limit: int, scope_messages: int
) -> dict[int, VectorHit]:
    """Up to ``limit`` nearest messages (by their best chunk), nearest first."""
    where = message_where(scope, filters)
    exact = scope_messages <= EXACT_SCAN_MAX_CHUNKS
    # Messages have ~1 chunk; ask for more chunks than messages so that a long message's
    # several chunks do not crowd others out.
    chunk_limit = limit * 2
    # ``+ 0`` keeps the planner off the HNSW index: the index serves only a bare ``<=>``.
    order = "(c.embedding <=> %s::vector) + 0" if exact else "c.embedding <=> %s::vector"
    sql = (
        "WITH nn AS MATERIALIZED ("
        " SELECT c.id, c.message_id, c.embedding <=> %s::vector AS distance"
        " FROM agent_sessions_messagechunk c"
        " JOIN agent_sessions_session s ON s.id = c.session_id"
        " JOIN agent_sessions_message m ON m.id = c.message_id"
        f" WHERE c.team_id = ANY(%s) AND {where.sql}"
        f" ORDER BY {order} LIMIT %s"
        ") SELECT DISTINCT ON (message_id) message_id, id, distance FROM nn"
        " ORDER BY message_id, distance"
    )
    params = [vector, list(scope.team_ids), *where.params, vector, chunk_limit]
    with transaction.atomic(), connection.cursor() as cursor:
        if not exact:
            cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            cursor.execute(f"SET LOCAL hnsw.ef_search = {max(HNSW_EF_SEARCH, chunk_limit)}")
            cursor.execute(f"SET LOCAL hnsw.max_scan_tuples = {HNSW_MAX_SCAN_TUPLES}")
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    rows.sort(key=lambda row: row[2])
    return {
        message_id: VectorHit(chunk_id, distance) for message_id, chunk_id, distance in rows[:limit]
    }


def distances_for(vector: str, message_ids: list[int]) -> dict[int, VectorHit]:
    """Best-chunk distance of given messages (found by the keyword side)."""
    if not message_ids:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT DISTINCT ON (c.message_id) c.message_id, c.id, c.embedding <=> %s::vector AS d"
            " FROM agent_sessions_messagechunk c WHERE c.message_id = ANY(%s)"
            " ORDER BY c.message_id, d",
            [vector, message_ids],
        )
        return {row[0]: VectorHit(row[1], row[2]) for row in cursor.fetchall()}


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
