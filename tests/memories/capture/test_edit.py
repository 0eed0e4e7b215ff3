"""A person's edits of a memory: what may change, what is refused (naming the field), and
that a deleted memory is a conflict, never a silent write."""

from __future__ import annotations

import pytest

from memories.capture.edit import edit, set_pinned
from memories.capture.record import (
    InvalidMemory,
    MemoryConflict,
    MemoryDraft,
    fingerprint,
    record,
)
from memories.forget.trash import delete as delete_memory
from memories.models import Memory, MemoryType
from tests.factories import ProjectFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def finding():
    return record(
        ProjectFactory(),
        MemoryDraft(type=MemoryType.FINDING, content="The cache never expires", severity="minor"),
    ).memory


def test_an_edit_rewords_and_relabels(finding):
    old_vector = list(finding.embedding)
    edited = edit(
        finding, content="  Cache entries outlive a deploy ", tags=["Cache", "cache", " "]
    )
    stored = Memory.objects.get(pk=finding.pk)
    assert stored.content == edited.content == "Cache entries outlive a deploy"
    assert stored.fingerprint == fingerprint("Cache entries outlive a deploy")
    assert list(stored.embedding) != old_vector
    assert stored.tags == ["cache"]
    assert stored.severity == "minor"  # not asked to change


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"content": "   "}, "content"),
        ({"content": "x" * 4001}, "content"),
        ({"status": "active"}, "status"),
        ({"public_id": "DEC-009"}, "public_id"),
    ],
)
def test_refused_edits_name_the_field_and_write_nothing(finding, changes, field):
    with pytest.raises(InvalidMemory) as refused:
        edit(finding, **changes)
    assert refused.value.field == field
    stored = Memory.objects.get(pk=finding.pk)
    assert (stored.content, stored.status, stored.public_id) == (
        "The cache never expires",
        "active",
        finding.public_id,
    )


def test_a_deleted_memory_is_a_conflict(finding):
    delete_memory(finding, reason="duplicate")
    with pytest.raises(MemoryConflict, match="is deleted"):
        edit(finding, topic="cache")
    with pytest.raises(MemoryConflict):
        set_pinned(finding, True)
    assert not Memory.objects.get(pk=finding.pk).pinned


def test_pinning_keeps_the_base_priority(finding):
    Memory.objects.filter(pk=finding.pk).update(priority=0.1)
    pinned = set_pinned(finding, True)
    assert pinned.priority == pytest.approx(pinned.base_priority)
    assert Memory.objects.get(pk=finding.pk).pinned
