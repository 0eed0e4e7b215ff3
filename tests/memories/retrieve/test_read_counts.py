"""Reading a memory counts as an access: its read count and last read move and its priority
is recomputed from them in the same statement (the SQL formula agrees with Python's)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from memories.capture.record import MemoryDraft, record
from memories.decay import priority_of
from memories.forget.trash import delete as delete_memory
from memories.models import Memory, MemoryType
from memories.retrieve.read_counts import note_access
from tests.factories import ProjectFactory

VECTOR = [1.0] + [0.0] * 383


def memory(project, kind=MemoryType.FINDING, content="The cache never expires", **fields):
    return record(
        project, MemoryDraft(type=kind, content=content, embedding=VECTOR, **fields)
    ).memory


def age(memory, days):
    then = timezone.now() - timedelta(days=days)
    Memory.objects.filter(pk=memory.pk).update(occurred_at=then, last_accessed_at=then)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("kind", "fields"),
    [
        (MemoryType.FINDING, {"severity": "critical"}),
        (MemoryType.FINDING, {"resolution": "resolved"}),
        (MemoryType.DECISION, {"details": {"implementation_impact": "high"}}),
        (MemoryType.PREFERENCE, {"confidence": "inferred"}),
        (MemoryType.AGENT_STATE, {}),
        (MemoryType.FACT, {"pinned": True}),
    ],
)
def test_a_read_recomputes_the_priority_from_the_new_count_and_time(kind, fields):
    read = memory(ProjectFactory(), kind, **fields)
    age(read, 40)
    Memory.objects.filter(pk=read.pk).update(access_count=3, priority=0.0)
    before = timezone.now()
    note_access([read.pk])
    read.refresh_from_db()
    assert read.access_count == 4
    assert read.last_accessed_at >= before
    assert read.priority == pytest.approx(priority_of(read, read.last_accessed_at), abs=1e-6)


@pytest.mark.django_db
def test_a_read_lifts_a_faded_memory():
    read = memory(ProjectFactory())
    age(read, 90)
    Memory.objects.filter(pk=read.pk).update(priority=priority_of(Memory.objects.get(pk=read.pk)))
    faded = Memory.objects.get(pk=read.pk).priority
    note_access([read.pk])
    assert Memory.objects.get(pk=read.pk).priority > faded + 0.2


@pytest.mark.django_db
def test_deleted_memories_and_no_ids_are_left_alone():
    project = ProjectFactory()
    gone, other = memory(project), memory(project, content="Use PostgreSQL for storage")
    delete_memory(gone, reason="wrong")
    note_access([])
    note_access([gone.pk])
    gone.refresh_from_db()
    other.refresh_from_db()
    assert (gone.access_count, gone.last_accessed_at) == (0, None)
    assert other.access_count == 0


@pytest.mark.django_db(transaction=True)
def test_concurrent_reads_all_count():
    read = memory(ProjectFactory())

    def open_it(_):
        try:
            note_access([read.pk])
        finally:
            connection.close()

    with ThreadPoolExecutor(6) as pool:
        list(pool.map(open_it, range(24)))
    assert Memory.objects.get(pk=read.pk).access_count == 24
