"""Deletion records of memories (docs/api.md, "Deleting memories"), beside those of sessions
(``sessions/forget/records.py``): one per deletion and project, scope "memory".

A record says who deleted, when, why, what kind (the memories' types, counted, in
``criteria["types"]``; a bulk deletion's filters beside them), how many and which (readable
ids); never any content. Restores count in ``restored_memories``; the purge sets
``purged_at`` when it deletes the record's memories for good.

Callers write records in the transaction of the change they describe, as sessions do.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from datetime import timedelta

from django.db.models import F
from django.utils import timezone

from memories.models import Memory
from sessions.forget.records import actor_label, per_project
from sessions.models import DeletionRecord, DeletionScope


def record_memory_deletion(
    memories: Iterable[Memory], *, by=None, reason: str = "", criteria: dict | None = None
) -> list[DeletionRecord]:
    """Record the deletion of ``memories`` (rows with ``project_id``, ``public_id`` and
    ``type``), one record per project (read here, in one query)."""
    now = timezone.now()
    records = []
    for project, group in per_project(memories):
        kinds = Counter(str(memory.type) for memory in group)
        records.append(
            DeletionRecord(
                team_id=project.team_id,
                project=project,
                project_label=str(project),
                scope=DeletionScope.MEMORY,
                criteria={**(criteria or {}), "types": dict(sorted(kinds.items()))},
                memory_ids=[memory.public_id for memory in group],
                deleted_by=by if getattr(by, "pk", None) is not None else None,
                actor=actor_label(by)[:200],
                reason=reason[:500],
                memories=len(group),
                recovery_deadline=now + timedelta(days=project.trash_days),
            )
        )
    return DeletionRecord.objects.bulk_create(records)


def _latest_records(project_id: int, public_ids: Iterable[str]) -> Counter:
    """Record id → how many of ``public_ids`` (of one project: readable ids are unique per
    project only) it is the latest record of: a memory deleted, restored and deleted again
    has two, and only the last one put it in the trash this time."""
    wanted = set(public_ids)
    latest: dict[str, int] = {}
    candidates = (
        DeletionRecord.objects.filter(
            scope=DeletionScope.MEMORY, project_id=project_id, memory_ids__overlap=list(wanted)
        )
        .order_by("-created_at", "-id")
        .values_list("id", "memory_ids")
    )
    for record_id, ids in candidates:
        for public_id in wanted.intersection(ids):
            latest.setdefault(public_id, record_id)
    return Counter(latest.values())


def _by_project(memories: Iterable[Memory]) -> dict[int, list[str]]:
    grouped: dict[int, list[str]] = {}
    for memory in memories:
        grouped.setdefault(memory.project_id, []).append(memory.public_id)
    return grouped


def note_memories_restored(memories: Iterable[Memory]) -> None:
    """These memories came back from the trash: their records count them as restored."""
    for project_id, public_ids in _by_project(memories).items():
        for record_id, count in _latest_records(project_id, public_ids).items():
            DeletionRecord.objects.filter(pk=record_id).update(
                restored_memories=F("restored_memories") + count
            )


def note_memories_purged(memories: Iterable[Memory]) -> None:
    """These memories are gone for good: the records that put them in the trash say when."""
    records = set()
    for project_id, public_ids in _by_project(memories).items():
        records |= set(_latest_records(project_id, public_ids))
    if records:
        DeletionRecord.objects.filter(pk__in=records, purged_at__isnull=True).update(
            purged_at=timezone.now()
        )


def deleted_by_labels(memories: Iterable[Memory]) -> dict[int, str]:
    """Who deleted each of ``memories`` (deleted rows), by pk: the person, else the actor
    its latest deletion record names (a token), else "an agent". One query for the page,
    whatever its size (the person is read with ``select_related("deleted_by")``)."""
    memories = list(memories)
    labels = {m.pk: m.deleted_by.get_username() for m in memories if m.deleted_by_id}
    unnamed = [m for m in memories if m.pk not in labels]
    if unnamed:
        wanted = {(m.project_id, m.public_id): m.pk for m in unnamed}
        records = (
            DeletionRecord.objects.filter(
                scope=DeletionScope.MEMORY,
                project_id__in={m.project_id for m in unnamed},
                memory_ids__overlap=[m.public_id for m in unnamed],
            )
            .order_by("-created_at", "-id")
            .values_list("project_id", "memory_ids", "actor")
        )
        for project_id, ids, actor in records:
            for public_id in ids:
                pk = wanted.get((project_id, public_id))
                if pk is not None:
                    labels.setdefault(pk, actor)
    return {m.pk: labels.get(m.pk, "an agent") for m in memories}
