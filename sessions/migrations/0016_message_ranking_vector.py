"""Add ``Message.ranking_vector``, each message's stored keyword ranking document (capture
writes it from now on: sessions/capture/keyword_context.py). Added empty, so no table rewrite;
0017 fills the rows captured before, apart, so that an interrupted fill resumes there."""

import django.contrib.postgres.search
from django.db import migrations


class Migration(migrations.Migration):
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
    ]
