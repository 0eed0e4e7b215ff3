"""Reading what searches read into PostgreSQL's buffers, after a restart.

On these VMs the OS gives its page cache back within seconds, so a block outside
shared_buffers is a disk read. Warming makes the first question to each team after a
restart, and new questions long after, markedly faster, with fewer disk blocks read per
search (``bench/search_speed.py`` with and without ``--no-warm``, back to back, measures it).
pg_prewarm would do this, but the embedded PostgreSQL ships without contrib, so each step is
a query that reads the pages a search reads, in this order:

1. the big teams' own HNSW graphs (``search/speed/team_indexes.py``): walks from the team's own
   vectors, spread over it, with ``ef_search`` at pgvector's ceiling, then the team's chunk
   rows (the walk returns ids; a search reads their rows);
2. every team's sign bits (the quantized vector path reads them from a covering index) and
   message rows (the keyword side reads a small team's messages through its team index),
   largest team first.

It stops where the estimate of what it has read would pass ``WARM_BUFFER_SHARE`` of
shared_buffers, leaving the rest to what searches bring in. A worker runs it when it starts
and after the hourly index build (``search.tasks.warm_buffers``); ``manage.py team_indexes
--warm`` runs it by hand.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from django.db import connection, transaction

from search.speed import team_indexes

logger = logging.getLogger(__name__)

WARM_BUFFER_SHARE = 0.8
WARM_CHUNKS_PER_PROBE = 10_000  # one graph walk per this many chunks
WARM_EF_SEARCH = 1_000  # pgvector's ceiling: each walk visits thousands of graph nodes


@dataclass(frozen=True)
class Warmed:
    team_id: int
    what: str  # "graph" or "rows"
    megabytes: float  # estimated
    seconds: float


def warm(team_ids: list[int] | None = None) -> list[Warmed]:
    """Read, for the given teams (default: all), what their searches read; return what was
    read, step by step."""
    sizes = _sizes()
    if sizes is None:  # a worker may start before the web container has migrated
        logger.info("nothing to warm: the search tables are not there yet (not migrated?)")
        return []
    every_team = team_indexes.team_messages()  # trashed ones too: they fill the table
    total_messages = max(1, sum(every_team.values()))
    teams = {t: n for t, n in every_team.items() if team_ids is None or t in team_ids}
    budget = WARM_BUFFER_SHARE * sizes["shared_buffers"]
    used = 0.0
    done: list[Warmed] = []
    graphs = team_indexes.indexed_teams()
    largest_first = sorted(teams, key=lambda t: -teams[t])
    steps = [(t, "graph") for t in largest_first if t in graphs]
    steps += [(t, "rows") for t in largest_first]
    for team_id, what in steps:
        share = teams[team_id] / total_messages
        if what == "graph":
            cost = sizes.get(f"chunk_hnsw_team_{team_id}", 0) + share * sizes["chunk_heap"]
        else:
            cost = share * (sizes["message_heap"] + sizes["message_team"] + sizes["chunk_bits"])
        if used + cost > budget:
            logger.info(
                "team %s: its %s left out (%.0f MB more would pass %.0f%% of shared_buffers)",
                team_id,
                what,
                cost / 2**20,
                WARM_BUFFER_SHARE * 100,
            )
            continue
        started = time.monotonic()
        if what == "graph":
            _read_graph(team_id, graphs[team_id])
        else:
            _read_rows(team_id)
        used += cost
        done.append(Warmed(team_id, what, cost / 2**20, time.monotonic() - started))
        logger.info(
            "team %s: read its %s (~%.0f MB) into shared_buffers in %.1f s",
            team_id,
            "graph and chunk rows" if what == "graph" else "messages and sign bits",
            done[-1].megabytes,
            done[-1].seconds,
        )
    return done


def _read_graph(team_id: int, chunks: int) -> None:
    team = int(team_id)
    probes = max(1, -(-chunks // WARM_CHUNKS_PER_PROBE))
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"SET LOCAL hnsw.ef_search = {WARM_EF_SEARCH}")
        cursor.execute("SET LOCAL enable_sort = off")  # the walk, not a sort of the team
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_indexonlyscan = off")  # the rows, not the index
        cursor.execute(
            f"SELECT count(session_id) FROM agent_sessions_messagechunk WHERE team_id = {team}"
        )
        for probe in range(probes):
            cursor.execute(
                "SELECT count(*) FROM (SELECT c.id FROM agent_sessions_messagechunk c"
                f" WHERE c.team_id = {team} ORDER BY c.embedding <=> ("
                "  SELECT embedding FROM agent_sessions_messagechunk"
                f"  WHERE team_id = {team} ORDER BY id OFFSET %s LIMIT 1)"
                " LIMIT %s) walk",
                [probe * chunks // probes, WARM_EF_SEARCH],
            )


def _read_rows(team_id: int) -> None:
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_bitmapscan = off")
        # The sign bits from the covering index alone, as the quantized path reads them.
        cursor.execute(
            "SELECT count(embedding_bits) FROM agent_sessions_messagechunk WHERE team_id = %s",
            [team_id],
        )
        # The message rows, through the team index (in the table's order: a run of reads).
        cursor.execute("SET LOCAL enable_indexonlyscan = off")
        cursor.execute(
            "SELECT count(session_id) FROM agent_sessions_message WHERE team_id = %s",
            [team_id],
        )


def _sizes() -> dict[str, float] | None:
    """Bytes: shared_buffers, the tables and indexes read, each team's own HNSW index (None
    when one of those tables or indexes does not exist)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_size_bytes(current_setting('shared_buffers')),"
            " pg_relation_size(to_regclass('agent_sessions_messagechunk')),"
            " pg_relation_size(to_regclass('agent_sessions_message')),"
            " pg_relation_size(to_regclass('message_team_idx')),"
            " pg_relation_size(to_regclass('chunk_team_bits_idx'))"
        )
        row = cursor.fetchone()
        if None in row:
            return None
        sizes = dict(
            zip(
                ["shared_buffers", "chunk_heap", "message_heap", "message_team", "chunk_bits"],
                map(float, row),
                strict=True,
            )
        )
        cursor.execute(
            "SELECT relname, pg_relation_size(oid) FROM pg_class"
            " WHERE relkind = 'i' AND relname LIKE 'chunk_hnsw_team_%%'"
        )
        sizes.update({name: float(size) for name, size in cursor.fetchall()})
    return sizes
