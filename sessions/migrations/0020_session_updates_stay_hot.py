"""Let the session row's updates be HOT (heap-only): every capture and append updates its
session (counts, ``updated_at``, the lifecycle clock), and ``updated_at`` was a key of the
index of sessions waiting for enrichment. An update that changes an indexed column writes a
new entry in every index of the table, the session vector's HNSW graph included, which grew
by one node per append (1,500 appends to 300 enriched sessions: 72 KB → 2 MB) and cost the
append's UPDATE twice the time (docs/benchmark-log.md, "Capture and appends"). The index now
holds the status alone (the waiting sessions are few; the pipeline sorts them), and the
table leaves a tenth of each new page free, where a row's next version can go.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("agent_sessions", "0019_folder_in_keyword_context")]

    operations = [
        migrations.RemoveIndex(model_name="session", name="session_enrich_todo_idx"),
        migrations.AddIndex(
            model_name="session",
            index=models.Index(
                condition=~models.Q(enrichment_status="done"),
                fields=["enrichment_status"],
                name="session_enrich_pending_idx",
            ),
        ),
        migrations.RunSQL(
            "ALTER TABLE agent_sessions_session SET (fillfactor = 90)",
            "ALTER TABLE agent_sessions_session RESET (fillfactor)",
        ),
    ]
