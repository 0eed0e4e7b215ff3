"""``Session.next_seq``: the seq the next captured message takes, kept on the session row
that every capture locks, so an append no longer asks the messages for MAX(seq).

Filled in the same transaction from the messages already stored (one past each session's
highest seq; sessions without messages keep the database default, 0). Going back drops the
column: nothing else reads it.
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
