from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0001_initial"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="memory",
            index=models.Index(fields=["team", "-occurred_at", "-id"], name="memory_recent_idx"),
        ),
        migrations.AddIndex(
            model_name="memory",
            index=models.Index(
                condition=models.Q(("pinned", True)),
                fields=["team", "-occurred_at"],
                name="memory_pinned_idx",
            ),
        ),
        migrations.AddIndex(
            model_name="memory",
            index=models.Index(
                condition=models.Q(("resolution", "open"), ("type", "finding")),
                fields=["team", "-occurred_at"],
                name="memory_open_findings_idx",
            ),
        ),
    ]
