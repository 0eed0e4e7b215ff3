"""``Session.next_seq``: the seq the next captured message takes, kept on the session row
that every capture locks, so an append no longer asks the messages for MAX(seq).

Filled in the same transaction from the messages already stored (one past each session's
highest seq; sessions without messages keep the database default, 0). Going back drops the
column: nothing else reads it.

Web processes of the previous version must not capture after this has run (`make run` and
compose stop them before migrating): they would store messages without moving the counter,
and the appends to that session would then collide with them (a 500, nothing stored is
lost) until ``FILL`` below is run again.
"""

from django.db import migrations, models

FILL = """
UPDATE agent_sessions_session s SET next_seq = top.seq + 1
FROM (SELECT session_id, max(seq) AS seq FROM agent_sessions_message GROUP BY session_id) top
WHERE top.session_id = s.id
"""


class Migration(migrations.Migration):
    dependencies = [("agent_sessions", "0017_fill_ranking_vectors")]

    operations = [
        migrations.AddField(
            model_name="session",
            name="next_seq",
            field=models.PositiveIntegerField(db_default=0),
        ),
        migrations.RunSQL(FILL, migrations.RunSQL.noop, elidable=True),
    ]
