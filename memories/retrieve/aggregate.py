"""Aggregations over the memories a caller sees (docs/api.md, "Memories": topics and
``getTimeline``): what the memories are about, and what happened when."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime

from django.db import connection

MAX_REFS = 20  # memory ids listed per topic and type


@dataclass
class Topic:
    name: str
    weight: float  # 0..1: its memories' summed priority, relative to the heaviest topic
    mentions: int  # memories about it
    first_mentioned: datetime
    last_mentioned: datetime
    by_type: dict[str, int] = field(default_factory=dict)
    memories: dict[str, list[str]] = field(default_factory=dict)  # type -> ids, best first


def topics(memories, limit: int = 50) -> list[Topic]:
    """The topics of ``memories`` (a queryset, already scoped and filtered): each tag and
    topic key, with its memories counted by type. Heaviest first."""
    ids_sql, ids_params = memories.values("id").query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            SELECT t.name, m.type, count(*), sum(m.priority), min(m.occurred_at),
                   max(m.occurred_at),
                   (array_agg(m.public_id ORDER BY m.priority DESC, m.id))[1:{MAX_REFS}]
            FROM memories_memory m
            CROSS JOIN LATERAL (
                SELECT DISTINCT x FROM unnest(
                    m.tags || CASE WHEN m.topic <> '' THEN ARRAY[m.topic::varchar] ELSE
                    '{{}}'::varchar[] END
                ) AS x
            ) AS t(name)
            WHERE m.id IN ({ids_sql})
            GROUP BY t.name, m.type
            """,
            ids_params,
        )
        rows = cursor.fetchall()
    found: dict[str, Topic] = {}
    weights: dict[str, float] = defaultdict(float)
    for name, kind, count, weight, first, last, refs in rows:
        topic = found.get(name)
        if topic is None:
            topic = found[name] = Topic(name, 0.0, 0, first, last)
        topic.mentions += count
        topic.first_mentioned = min(topic.first_mentioned, first)
        topic.last_mentioned = max(topic.last_mentioned, last)
        topic.by_type[kind] = count
        topic.memories[kind] = list(refs)
        weights[name] += weight
    heaviest = max(weights.values(), default=0.0) or 1.0
    for name, topic in found.items():
        topic.weight = round(weights[name] / heaviest, 3)
    ranked = sorted(found.values(), key=lambda t: (-t.weight, -t.mentions, t.name))
    return ranked[:limit]


@dataclass
class Timeline:
    events: list  # memories, oldest first
    buckets: dict[str, dict]  # "2026-01-11T14:00" -> {"event_count": n, "event_refs": [...]}
    truncated: bool  # older events were left out


def hour_bucket(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:00")


def timeline(memories, limit: int = 200) -> Timeline:
    """The latest ``limit`` of ``memories`` as chronological events, with hour buckets."""
    latest = list(memories.order_by("-occurred_at", "-id")[: limit + 1])
    truncated = len(latest) > limit
    events = latest[:limit][::-1]
    buckets: dict[str, dict] = {}
    for memory in events:
        bucket = buckets.setdefault(
            hour_bucket(memory.occurred_at), {"event_count": 0, "event_refs": []}
        )
        bucket["event_count"] += 1
        bucket["event_refs"].append(memory.public_id)
    return Timeline(events, buckets, truncated)
