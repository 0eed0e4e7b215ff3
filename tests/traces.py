"""Where a word is still stored: every row of the tables that hold sessions' content,
read whole (every column, tsvectors and JSON included, as PostgreSQL prints the row)."""

from __future__ import annotations

from django.db import connection

CONTENT_TABLES = (
    "agent_sessions_session",
    "agent_sessions_message",
    "agent_sessions_messagechunk",
    "agent_sessions_entity",
    "agent_sessions_deletionrecord",
)


def rows_holding(word: str, **where: object) -> dict[str, int]:
    """Table → rows whose text holds ``word`` (any case), for the tables where any does.
    ``where``: column = value conditions, applied to the tables that have the column."""
    found = {}
    with connection.cursor() as cursor:
        for table in CONTENT_TABLES:
            cursor.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = %s",
                [table],
            )
            columns = {row[0] for row in cursor.fetchall()}
            conditions = {k: v for k, v in where.items() if k in columns}
            sql = f"SELECT count(*) FROM {table} t WHERE t::text ILIKE %s"
            sql += "".join(f" AND t.{column} = %s" for column in conditions)
            cursor.execute(sql, [f"%{word}%", *conditions.values()])
            count = cursor.fetchone()[0]
            if count:
                found[table] = count
    return found
