"""Where a string is still stored: every text column of every table, read from PostgreSQL's
catalogue, so a table added later is covered without anyone listing it.

What forgetting promises (``sessions/derived.py``) is checked with this: after an
erasure or an anonymisation, the erased names, e-mail addresses and secrets are in no row
of any table. An admin answering a request to be forgotten can run it too
(``manage.py find_text``).

Text is what is searched: ``text``, ``varchar``, ``json``/``jsonb`` (as their text),
``tsvector`` (its lexemes: a keyword index keeps the words it was made from) and arrays of
text. Vectors are numbers and cannot be searched for words; whoever rewrites a text makes
its vectors again (the tests check that).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import connection

SCALAR_TYPES = ("text", "character varying", "character", "json", "jsonb", "tsvector")
ARRAY_TYPES = ("_text", "_varchar", "_bpchar")


@dataclass(frozen=True)
class Hit:
    table: str
    column: str
    needle: str
    rows: int


def text_columns() -> dict[str, list[str]]:
    """Table → its text columns, for every table of the current schema."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT c.table_name, c.column_name
            FROM information_schema.columns c
            JOIN information_schema.tables t
              ON t.table_schema = c.table_schema AND t.table_name = c.table_name
            WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
              AND (c.data_type = ANY(%s) OR (c.data_type = 'ARRAY' AND c.udt_name = ANY(%s)))
            ORDER BY c.table_name, c.ordinal_position
            """,
            [list(SCALAR_TYPES), list(ARRAY_TYPES)],
        )
        columns: dict[str, list[str]] = {}
        for table, column in cursor.fetchall():
            columns.setdefault(table, []).append(column)
    return columns


def find_text(needles: list[str], *, skip: set[tuple[str, str]] = frozenset()) -> list[Hit]:
    """Every (table, column) holding one of ``needles`` (case-insensitive), with how many
    rows; ``skip`` names (table, column) pairs not to read. One pass over each table."""
    needles = [n.casefold() for n in needles if n]
    if not needles:
        return []
    hits = []
    qn = connection.ops.quote_name
    with connection.cursor() as cursor:
        for table, columns in text_columns().items():
            pairs = [(c, n) for c in columns if (table, c) not in skip for n in needles]
            if not pairs:
                continue
            counts = ", ".join(
                f"count(*) FILTER (WHERE strpos(lower({qn(c)}::text), %s) > 0)" for c, _ in pairs
            )
            cursor.execute(f"SELECT {counts} FROM {qn(table)}", [n for _, n in pairs])
            for (column, needle), rows in zip(pairs, cursor.fetchone(), strict=True):
                if rows:
                    hits.append(Hit(table, column, needle, rows))
    return hits
