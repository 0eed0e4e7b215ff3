"""Where a session's bytes are: its messages' text (tool output apart), its vectors and its
entities, next to the quota (which counts message text only: that is what captures add).

Read on request for one session (the detail page, ``GET …/size``), never for a list."""

from __future__ import annotations

from django.db.models import BigIntegerField, Func, Q, Sum
from django.db.models.functions import Coalesce

from sessions.capture.quota import quota_state
from sessions.models import Entity, Message, MessageChunk, MessageRole, Session


class _TextBytes(Func):
    function = "octet_length"
    output_field = BigIntegerField()


class _StoredBytes(Func):
    """What PostgreSQL stores for a value (after compression; without the row's overhead)."""

    function = "pg_column_size"
    output_field = BigIntegerField()


def _total(queryset, expression, where=None) -> int:
    return queryset.aggregate(n=Coalesce(Sum(expression, filter=where), 0))["n"]


def size_breakdown(session: Session) -> dict:
    messages = Message.objects.of_session(session)
    tool = Q(role=MessageRole.TOOL)
    parts = {
        "messages_bytes": _total(messages, _TextBytes("content"), ~tool),
        "tool_output_bytes": _total(messages, _TextBytes("content"), tool),
        "vectors_bytes": _total(
            MessageChunk.objects.of_session(session),
            _StoredBytes("embedding") + _StoredBytes("embedding_bits") + _StoredBytes("text"),
        ),
        "entities_bytes": _total(
            Entity.objects.of_session(session), _StoredBytes("value") + _StoredBytes("context")
        ),
    }
    parts["total_bytes"] = sum(parts.values())
    parts["quota"] = quota_state(session.project, session.size_bytes).as_dict()
    return parts
