"""Classify the messages captured before ``Message.kind`` was set at capture.

Only rows that can be something other than prose are read (a cheap SQL prefilter: system
and tool messages, tool calls, what an importer marked injected, long texts, and texts
that open with a tag or carry a console marker), in id ranges, so a big table is never
read whole nor locked long. Going back leaves the kinds as they are: the column itself
belongs to 0013.
"""

from django.db import migrations
from django.db.models import Q
from django.db.models.functions import Length

BATCH = 5000
CONSOLE_MARKERS = (
    r"(Aider v[0-9]|Tokens: [0-9.,]+k? sent|Applied edit to |Commit [0-9a-f]{7}|\(Y\)es/\(N\)o"
    r"|Git repo: |Repo-map|Model: .*edit format|You can use /undo|[0-9]%\s*\||"
    r"[\u2500-\u259f]{10}|\[[=#>. -]{8,}\])"
)
INJECTED_OPENINGS = (
    r"^\s*(<|#\s*(AGENTS|CLAUDE|GEMINI|COPILOT|CODEX)\.md|Contents of |Base directory for this"
    r"|The following skills|As you answer the user|This session is being continued|Caveat: )"
)


def classify(apps, schema_editor):
    from sessions.capture.message_kind import BULK_MIN_CHARS, kind_of

    Message = apps.get_model("agent_sessions", "Message")
    may_be_noise = (
        Q(role__in=("system", "tool"))
        | ~Q(tool_name="")
        | Q(metadata__has_key="injected")
        | Q(length__gte=BULK_MIN_CHARS)
        | Q(content__regex=INJECTED_OPENINGS)
        | Q(content__regex=CONSOLE_MARKERS)
    )
    bounds = Message.objects.order_by("id").values_list("id", flat=True)
    first, last = bounds.first(), bounds.last()
    if first is None:
        return
    for start in range(first, last + 1, BATCH):
        rows = (
            Message.objects.filter(id__gte=start, id__lt=start + BATCH, removed_at__isnull=True)
            .annotate(length=Length("content"))
            .filter(may_be_noise)
            .only("id", "role", "content", "tool_name", "metadata", "kind")
        )
        changed = []
        for message in rows.iterator(chunk_size=500):
            kind = kind_of(message.role, message.content, message.tool_name, message.metadata)
            if kind != message.kind:
                message.kind = kind
                changed.append(message)
        Message.objects.bulk_update(changed, ["kind"], batch_size=1000)


class Migration(migrations.Migration):
    dependencies = [("agent_sessions", "0013_message_kind_speaker_alias")]

    operations = [migrations.RunPython(classify, migrations.RunPython.noop, elidable=True)]
