"""Insert many rows of one model in one statement whose text does not grow with the rows.

Django's ``bulk_create`` writes one placeholder per value, so a 1,000-message capture is an
INSERT of 24,000 parameters: Django spends a third of a whole session's capture building its
text, and psycopg, which binds parameters on the client, parses that text again to do so (a
statement of over 50 parameters is never cached). Here each column is one array parameter,
zipped back into rows by ``unnest`` (docs/benchmark-log.md, "Capture and appends"):

    INSERT INTO t (a, b) SELECT a, b FROM unnest(%s::integer[], %s::text[])
        WITH ORDINALITY AS u(a, b, n) ORDER BY n RETURNING id

Each value is prepared as ``bulk_create`` prepares it (``pre_save``, ``get_db_prep_save``),
columns with a database default that no row sets are left to it, and the rows get their ids
in their order, as ``bulk_create`` gives them. Rows go in batches of ``BATCH`` (as
``bulk_create``'s did), so no array outgrows what one value may hold (1 GB) on a huge import.
"""

from __future__ import annotations

from django.db import connection
from django.db.models import Model
from django.db.models.expressions import DatabaseDefault

BATCH = 2000


def insert_rows(rows: list[Model]) -> list[Model]:
    """Insert ``rows`` (unsaved instances of one model) and set their primary keys."""
    for first in range(0, len(rows), BATCH):
        _insert(rows[first : first + BATCH])
    return rows


def _insert(rows: list[Model]) -> None:
    meta = rows[0]._meta
    columns, arrays, casts = [], [], []
    for field in meta.concrete_fields:
        if field.primary_key or field.generated:
            continue
        values = [field.pre_save(row, add=True) for row in rows]
        defaulted = [isinstance(value, DatabaseDefault) for value in values]
        if all(defaulted):
            continue
        if any(defaulted):
            raise ValueError(f"{meta.label}.{field.name}: set on some rows only")
        columns.append(connection.ops.quote_name(field.column))
        arrays.append([field.get_db_prep_save(value, connection) for value in values])
        casts.append(f"%s::{field.db_type(connection)}[]")
    names = ", ".join(columns)
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {connection.ops.quote_name(meta.db_table)} ({names})"
            f" SELECT {names} FROM unnest({', '.join(casts)})"
            f" WITH ORDINALITY AS u({names}, ordinality) ORDER BY ordinality"
            f" RETURNING {connection.ops.quote_name(meta.pk.column)}",
            arrays,
        )
        ids = [row[0] for row in cursor.fetchall()]
    for row, pk in zip(rows, ids, strict=True):
        row.pk = pk
        row._state.adding = False
        row._state.db = connection.alias
