"""Per-team partial indexes for big teams: their own HNSW graph over their chunks, and their
own GIN indexes over their messages' words.

The shared indexes serve every team at once, so a search of one team pays for the others:
a team-filtered scan of the shared HNSW graph reads ~(rows wanted / the team's share)
tuples, and the keyword side ANDs each word's GIN matches (all teams) with the team's
bitmap (built again for each word). Without them a big team's vector side is a scan of all
its chunks' sign bits (search/semantic.py, the quantized path). pgvector's advice for a
filter with few distinct values is a partial index per value; a team is such a value once
it is big, and the big teams are few.

With them, a big team's vector side and keyword candidates are faster, with recall close to
the exact scan's; what they cost in space and build time grows with the team's messages
(bench/search_speed.py measures all of it).

``ensure()`` builds the indexes of teams that reached ``TEAM_INDEX_MIN_MESSAGES`` and drops
those of teams that are gone; Celery beat runs it hourly (``search.tasks.build_team_indexes``), and
``manage.py team_indexes`` runs it by hand. Searches use a team's indexes once all three are
built and valid (``indexed_teams``, re-read every ``REFRESH_SECONDS``).

``search/speed/warm.py`` reads the graphs into PostgreSQL's buffers after a restart.
"""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass

from django.conf import settings
from django.db import connection

logger = logging.getLogger(__name__)

REFRESH_SECONDS = 60
KINDS = {
    # name prefix: (table, index method and column)
    "chunk_hnsw_team_": (
        "agent_sessions_messagechunk",
        "hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)",
    ),
    "message_search_gin_team_": ("agent_sessions_message", "gin (search_vector)"),
    "message_context_gin_team_": ("agent_sessions_message", "gin (context_vector)"),
}
_NAME = re.compile(r"^(" + "|".join(KINDS) + r")(\d+)$")


@dataclass(frozen=True)
class Change:
    team_id: int
    index: str
    action: str  # "built" or "dropped"
    seconds: float


def min_messages() -> int:
    return settings.TEAM_INDEX_MIN_MESSAGES


def existing() -> dict[str, tuple[bool, float]]:
    """Name → (valid, entries as of the last VACUUM/ANALYZE), for every per-team index (an
    interrupted CONCURRENTLY build leaves an invalid one behind: it is dropped and built
    again)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, i.indisvalid, c.reltuples FROM pg_index i"
            " JOIN pg_class c ON c.oid = i.indexrelid"
            " WHERE c.relname ~ %s",
            [_NAME.pattern],
        )
        return {name: (valid, entries) for name, valid, entries in cursor.fetchall()}


def team_messages(teams: list[int] | None = None) -> dict[int, int]:
    """Team id → messages (of ``teams``, or of every team), those in the trash too (from
    the sessions' counts: no scan of the message table)."""
    only = " WHERE team_id = ANY(%s)" if teams is not None else ""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT team_id, sum(message_count) FROM agent_sessions_session{only}"
            " GROUP BY team_id",
            [teams] if teams is not None else [],
        )
        return {team: int(count) for team, count in cursor.fetchall() if count}


def big_teams() -> dict[int, int]:
    """Team id → messages, for the teams at or over the threshold."""
    return {team: n for team, n in team_messages().items() if n >= min_messages()}


def ensure(*, concurrently: bool = True) -> list[Change]:
    """Build the missing indexes of big teams, drop the indexes of teams that no longer exist
    (a team that shrinks keeps its indexes: they stay correct, and shrinking is rare)."""
    changes: list[Change] = []
    have = existing()
    with connection.cursor() as cursor:
        cursor.execute("SELECT id FROM teams_team")
        teams = {row[0] for row in cursor.fetchall()}
    option = " CONCURRENTLY" if concurrently else ""
    for name in sorted(have):
        team_id = int(_NAME.match(name).group(2))
        if team_id not in teams or not have[name][0]:
            started = time.monotonic()
            with connection.cursor() as cursor:
                cursor.execute(f'DROP INDEX{option} IF EXISTS "{name}"')
            changes.append(Change(team_id, name, "dropped", time.monotonic() - started))
            del have[name]
    for team_id, messages in sorted(big_teams().items(), key=lambda item: -item[1]):
        for prefix, (table, method) in KINDS.items():
            name = f"{prefix}{int(team_id)}"
            if name in have:
                continue
            started = time.monotonic()
            with connection.cursor() as cursor:
                # HNSW builds fast only when its graph fits (see migration 0006).
                cursor.execute("SET maintenance_work_mem = '1GB'")
                try:
                    cursor.execute(
                        f'CREATE INDEX{option} "{name}" ON {table} USING {method}'
                        f" WHERE team_id = {int(team_id)}"
                    )
                finally:
                    cursor.execute("RESET maintenance_work_mem")
            seconds = time.monotonic() - started
            logger.info(
                "team %s (%d messages): built %s in %.1f s", team_id, messages, name, seconds
            )
            changes.append(Change(team_id, name, "built", seconds))
    if changes:
        forget()
    return changes


_cache: dict = {"at": -float("inf"), "teams": {}, "messages": {}}


def indexed_teams() -> dict[int, int]:
    """Team id → chunks in its HNSW index (as of the last ANALYZE; at least 1), for the
    teams whose three indexes are all built and valid. Cached ``REFRESH_SECONDS``."""
    now = time.monotonic()
    if now - _cache["at"] > REFRESH_SECONDS:
        built: dict[int, int] = {}
        chunks: dict[int, int] = {}
        for name, (valid, entries) in existing().items():
            if valid:
                prefix, team = _NAME.match(name).groups()
                built[int(team)] = built.get(int(team), 0) + 1
                if prefix == "chunk_hnsw_team_":
                    chunks[int(team)] = max(1, int(entries))
        teams = {t: chunks[t] for t, count in built.items() if count == len(KINDS)}
        messages = team_messages(list(teams)) if teams else {}
        _cache.update(at=now, teams=teams, messages=messages)
    return _cache["teams"]


def indexed_team_messages(team_id: int) -> int | None:
    """Messages of a team with its own indexes (None for another team), read with
    ``indexed_teams``. A scope's share of such a team is counted in messages, not chunks:
    a team of long messages has several chunks per message."""
    indexed_teams()
    return _cache["messages"].get(team_id)


def forget() -> None:
    """Re-read the indexes on the next search (after building or dropping some)."""
    _cache["at"] = -float("inf")
