"""Give the messages of sessions with a working folder (``cwd`` metadata) their folder's
name in their keyword context (``sessions/capture/keyword_context.py``, ``FOLDER``); messages
captured from now on get it at capture.

Session by session, each its own transaction (the migration is not atomic): a session's rows
are locked for one short UPDATE, and a fill that stops half-way is safe to run again (it
computes each context from the definition, whatever it held). Sessions without a ``cwd``
(chats, LoCoMo-like captures) are not touched: their contexts do not change. Going back
leaves the contexts as they are: search reads them the same way.
"""

from django.db import migrations


def fill(apps, schema_editor):
    from sessions.capture.keyword_context import index_context

    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT id FROM agent_sessions_session WHERE coalesce(metadata->>'cwd', '') <> ''"
            " ORDER BY id"
        )
        sessions = [row[0] for row in cursor.fetchall()]
    for session_id in sessions:
        index_context(session_id, 0)


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("agent_sessions", "0018_session_next_seq")]

    operations = [migrations.RunPython(fill, migrations.RunPython.noop, elidable=True)]
