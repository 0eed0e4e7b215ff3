"""What an append's update of its session row costs, HOT or not (migration 0020).

Every capture and append updates its session's row (counts, ``updated_at``, the lifecycle
clock). When the update changes no column an index holds, PostgreSQL can write the new row
version in the same page without touching any index (a HOT update); otherwise every index
of the table gets a new entry, the session vector's HNSW graph included.

Starts its own embedded PostgreSQL in a temporary folder, captures ``--sessions`` one-message
sessions, gives each a vector (as enrichment does), then runs the append's UPDATE
``--rounds`` times on each session, one statement per transaction, under each index layout
in turn: the sessions table as migrated (as it is now), with the former index of sessions
waiting for enrichment (``(enrichment_status, updated_at)``: not HOT), and as it is now
again. Per layout: the UPDATE's median and p95 (ms), how many were HOT, and the size of the
session vectors' HNSW index after.

    .venv/bin/python bench/session_row_updates.py [--sessions 300] [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import django_on_embedded_servers, percentile

APPEND_UPDATE = (
    "UPDATE agent_sessions_session SET message_count = message_count + 1,"
    " size_bytes = size_bytes + 40, next_seq = next_seq + 1, updated_at = now(),"
    " enrichment_status = 'pending', last_active_at = now(), lifecycle = 'active',"
    " archived_at = NULL WHERE id = %s"
)
FORMER_INDEX = (
    "CREATE INDEX session_enrich_todo_idx ON agent_sessions_session"
    " (enrichment_status, updated_at) WHERE enrichment_status <> 'done'"
)


def stats(cursor) -> tuple[int, int, int]:
    cursor.execute("SELECT pg_stat_force_next_flush()")
    time.sleep(1)
    cursor.execute(
        "SELECT n_tup_upd, n_tup_hot_upd, pg_relation_size('session_embedding_hnsw')"
        " FROM pg_stat_user_tables WHERE relname = 'agent_sessions_session'"
    )
    return cursor.fetchone()


def run(label: str, sessions: list[int], rounds: int) -> None:
    from django.db import connection

    times = []
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE agent_sessions_session")
        updated, hot, _ = stats(cursor)
        for _ in range(rounds):
            for session_id in sessions:
                started = time.perf_counter()
                cursor.execute(APPEND_UPDATE, [session_id])
                times.append((time.perf_counter() - started) * 1000)
        after_updated, after_hot, size = stats(cursor)
    print(
        f"{label:<44} median {statistics.median(times):.3f} ms, p95"
        f" {percentile(times, 0.95):.3f} ms, HOT {after_hot - hot} of"
        f" {after_updated - updated}, session HNSW index {size / 1024:,.0f} KB",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with django_on_embedded_servers():
        from django.db import connection

        from sessions.capture.service import capture_session
        from teams.services import ensure_team_and_project
        from transcripts.base import ParsedMessage, ParsedSession

        _, project, _ = ensure_team_and_project("bench", "rows")
        sessions = [
            capture_session(
                project,
                ParsedSession(
                    source_format="api",
                    agent_name="bench",
                    messages=[ParsedMessage(role="user", content=f"message {i}")],
                ),
            ).session.pk
            for i in range(args.sessions)
        ]
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE agent_sessions_session SET enrichment_status = 'pending', embedding ="
                " (SELECT array_agg(random())::vector(384) FROM generate_series(1, 384))"
            )
        run("as migrated (0020)", sessions, args.rounds)
        with connection.cursor() as cursor:
            cursor.execute(FORMER_INDEX)
        run("with the former (enrichment_status, updated_at)", sessions, args.rounds)
        with connection.cursor() as cursor:
            cursor.execute("DROP INDEX session_enrich_todo_idx")
        run("as migrated again", sessions, args.rounds)


if __name__ == "__main__":
    main()
