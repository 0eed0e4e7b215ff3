"""Fill ``Message.ranking_vector`` for the messages captured before 0016.

In id ranges, each range its own transaction (the migration is not atomic), so a big table
is never locked whole nor long: a range's rows are locked for the time of one short UPDATE,
a row that capture wrote meanwhile keeps its own document, and a fill that stops half-way
takes up where it stopped when run again. Until a row is filled, search ranks it on the
document built from the same definition (search/keyword.py), so scores are the same
throughout. Going back leaves the column as it is: it belongs to 0016.
"""

from django.db import migrations

BATCH = 5000
FILL = """
UPDATE agent_sessions_message m SET ranking_vector = {document}
WHERE m.id >= %s AND m.id < %s AND m.ranking_vector IS NULL
"""


def fill(apps, schema_editor):
    from sessions.capture.keyword_context import RANKING_DOCUMENT

    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT min(id), max(id) FROM agent_sessions_message WHERE ranking_vector IS NULL"
        )
        first, last = cursor.fetchone()
        if first is None:
            return
        sql = FILL.format(document=RANKING_DOCUMENT.format(m="m"))
        for start in range(first, last + 1, BATCH):
            cursor.execute(sql, [start, start + BATCH])


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("agent_sessions", "0016_message_ranking_vector")]

    operations = [migrations.RunPython(fill, migrations.RunPython.noop, elidable=True)]
