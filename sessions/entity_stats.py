"""How widespread each entity is across sessions: the dashboard's top entities and the API's
entity list both count here, so they give the same numbers for the same sessions."""

from __future__ import annotations

from django.db.models import Count, Max, QuerySet, Sum

from sessions.models import Entity


def entity_counts(entities: QuerySet[Entity], limit: int) -> list[dict]:
    """One row per entity (``type``, ``normalized``) among ``entities`` (already narrowed to
    the caller's sessions), most widespread first: ``value``, one spelling of it as written
    (the greatest, so the answer does not depend on which row comes first); ``sessions``,
    how many sessions touched it; ``mentions``, how often in all; ``last_seen``, the latest
    start of those sessions."""
    return list(
        entities.values("type", "normalized")
        .annotate(
            value=Max("value"),
            # An entity has one row per session (entity_session_type_value_uniq), so counting
            # rows counts sessions, without the sort a DISTINCT would need.
            sessions=Count("id"),
            mentions=Sum("count"),
            last_seen=Max("session__started_at"),
        )
        .order_by("-sessions", "-mentions", "type", "normalized")[:limit]
    )
