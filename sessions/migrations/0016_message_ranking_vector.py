"""Store each message's keyword ranking document (``Message.ranking_vector``), and fill it for
the messages captured before (capture writes it from now on: sessions/capture/keyword_context.py).

The column is added empty (no table rewrite). The rows are then filled in id ranges, each
range its own transaction (the migration is not atomic), so a big table is never locked
whole nor long: a range's rows are locked for the time of one short UPDATE, and a row that
capture wrote meanwhile keeps its own document. Until a row is filled, search ranks it on
the document built from the same definition (search/keyword.py), so scores are the same
throughout. Going back drops the column with the field.
"""

import django.contrib.postgres.search
from django.db import migrations

BATCH = 5000
FILL = """
UPDATE agent_sessions_message m SET ranking_vector = {document}
WHERE m.id >= %s AND m.id < %s AND m.ranking_vector IS NULL
"""


def fill(apps, schema_editor):
    from sessions.capture.keyword_context import RANKING_DOCUMENT

    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT min(id), max(id) FROM agent_sessions_message")
        first, last = cursor.fetchone()
        if first is None:
            return
        sql = FILL.format(document=RANKING_DOCUMENT.format(m="m"))
        for start in range(first, last + 1, BATCH):
            cursor.execute(sql, [start, start + BATCH])


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("agent_sessions", "0015_source_formats_managed_agent_gemini_cursor_opencode"),
    ]

    operations = [
        migrations.AddField(
            model_name="message",
            name="ranking_vector",
            field=django.contrib.postgres.search.SearchVectorField(
                blank=True,
                help_text="What keyword search ranks the message on: its own words (weight A) "
                "and its context's, kept with the context (sessions/capture/keyword_context.py).",
                null=True,
            ),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop, elidable=True),
    ]
