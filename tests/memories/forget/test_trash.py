"""The memory trash as a service (docs/memories.md): deleting one or many leaves a deletion
record (who, when, why, what kind, how many; never the content), marks diary days due,
restores until the project's recovery deadline, and the daily purge deletes for good what is
past it while the record stays."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from memories.capture.record import InvalidMemory, MemoryConflict, MemoryDraft, record
from memories.derived import MemoriesDerived
from memories.diary.models import DiaryDue
from memories.forget import trash
from memories.forget.records import deleted_by_labels
from memories.models import Memory, MemoryStatus, MemoryType
from sessions.forget.records import record_state
from sessions.models import DeletionRecord, DeletionScope
from tests.factories import ProjectFactory, UserFactory

pytestmark = pytest.mark.django_db

SAID = datetime(2026, 1, 11, 15, 30, tzinfo=UTC)
SECRET = "The staging password is hunter2"


def remember(project, content, *, kind=MemoryType.FACT, topic="", occurred_at=SAID):
    draft = MemoryDraft(type=kind, content=content, topic=topic, occurred_at=occurred_at)
    return record(project, draft).memory


@pytest.fixture
def project():
    return ProjectFactory(trash_days=30)


def test_a_deletion_hides_the_memory_and_leaves_a_record_without_content(project):
    memory = remember(project, SECRET)
    person = UserFactory()
    trash.delete(memory, by=person, reason="Privacy - a password")

    stored = Memory.objects.get(pk=memory.pk)
    assert stored.status == MemoryStatus.DELETED and stored.deleted_by == person
    assert not Memory.objects.live().filter(pk=memory.pk).exists()
    rec = DeletionRecord.objects.get(scope=DeletionScope.MEMORY)
    assert (rec.actor, rec.reason, rec.memories, rec.memory_ids) == (
        person.username,
        "Privacy - a password",
        1,
        [memory.public_id],
    )
    assert rec.criteria == {"types": {"fact": 1}}
    assert rec.recovery_deadline == pytest.approx(
        stored.deleted_at + timedelta(days=30), abs=timedelta(seconds=5)
    )
    assert record_state(rec) == "in_trash"
    assert "hunter2" not in repr(
        DeletionRecord.objects.filter(pk=rec.pk).values().get()
    )  # never the content


def test_a_deletion_needs_a_reason_and_is_not_repeated(project):
    memory = remember(project, "We deploy on Fridays")
    with pytest.raises(InvalidMemory) as refused:
        trash.delete(memory, reason="  ")
    assert refused.value.field == "reason"
    trash.delete(memory, reason="wrong")
    with pytest.raises(MemoryConflict) as again:
        trash.delete(memory, reason="twice")
    assert again.value.state["recovery_deadline"]
    assert DeletionRecord.objects.filter(scope=DeletionScope.MEMORY).count() == 1


def test_delete_and_restore_mark_the_diary_day_due(project):
    memory = remember(project, "We deploy on Fridays")
    DiaryDue.objects.all().delete()
    trash.delete(memory, reason="wrong")
    assert DiaryDue.objects.filter(team=project.team, day=SAID.date()).exists()
    DiaryDue.objects.all().delete()
    trash.restore(memory)
    assert DiaryDue.objects.filter(team=project.team, day=SAID.date()).exists()


def test_a_restore_brings_it_back_and_counts_in_the_record(project):
    memory = remember(project, "We deploy on Fridays")
    trash.delete(memory, reason="wrong")
    restored = trash.restore(memory)
    assert restored.status == MemoryStatus.ACTIVE and restored.deleted_at is None
    rec = DeletionRecord.objects.get(scope=DeletionScope.MEMORY)
    assert rec.restored_memories == 1 and record_state(rec) == "restored"
    with pytest.raises(MemoryConflict):
        trash.restore(memory)  # not deleted any more


def test_a_restore_after_the_recovery_deadline_is_refused_naming_it(project):
    memory = remember(project, "We deploy on Fridays")
    trash.delete(memory, reason="wrong")
    Memory.objects.filter(pk=memory.pk).update(deleted_at=timezone.now() - timedelta(days=31))
    with pytest.raises(trash.RecoveryWindowPassed) as refused:
        trash.restore(memory)
    assert refused.value.code == "MEM_E007"
    assert "recovery_deadline" in refused.value.state
    assert Memory.objects.get(pk=memory.pk).status == MemoryStatus.DELETED


def test_the_daily_purge_deletes_what_is_past_its_window_and_keeps_the_record(project):
    old = remember(project, "An old mistake")
    recent = remember(project, "A recent mistake")
    trash.delete(old, reason="wrong")
    trash.delete(recent, reason="wrong")
    Memory.objects.filter(pk=old.pk).update(deleted_at=timezone.now() - timedelta(days=31))

    counts = MemoriesDerived().purge_expired(timezone.now())  # the daily purge's hook

    assert counts["memories"] == 1
    assert not Memory.objects.filter(pk=old.pk).exists()
    assert Memory.objects.get(pk=recent.pk).status == MemoryStatus.DELETED  # still restorable
    records = {r.memory_ids[0]: r for r in DeletionRecord.objects.filter(scope="memory")}
    assert record_state(records[old.public_id]) == "purged"
    assert record_state(records[recent.public_id]) == "in_trash"


def test_a_bulk_delete_marks_all_its_matches_with_one_record_per_project(project):
    other = ProjectFactory(team=project.team, trash_days=7)
    words = ["Redis holds the cache", "The cache lives an hour", "Nginx caches images"]
    mine = [remember(project, text, topic="cache") for text in words]
    theirs = remember(other, "Cache fact elsewhere", topic="cache")
    keep = remember(project, "Unrelated", topic="deploys")
    selected = Memory.objects.filter(topic="cache")

    plan = trash.plan_bulk_delete(selected)
    assert (plan.count, plan.already) == (4, 0)
    assert Memory.objects.filter(status=MemoryStatus.DELETED).count() == 0  # a plan changes nothing

    done = trash.delete_many(selected, reason="cache is gone", criteria={"topic": "cache"})
    assert done.count == 4
    assert Memory.objects.filter(status=MemoryStatus.DELETED).count() == 4
    assert Memory.objects.get(pk=keep.pk).status == MemoryStatus.ACTIVE
    by_project = {r.project_id: r for r in done.records}
    assert by_project[project.pk].memories == 3
    assert sorted(by_project[project.pk].memory_ids) == sorted(m.public_id for m in mine)
    assert by_project[other.pk].memory_ids == [theirs.public_id]
    assert by_project[project.pk].criteria == {"topic": "cache", "types": {"fact": 3}}
    assert trash.plan_bulk_delete(selected).already == 4


def test_a_bulk_delete_over_the_cap_changes_nothing(project, monkeypatch):
    monkeypatch.setattr(trash, "MAX_BULK", 2)
    for text in ["Redis holds the cache", "The cache lives an hour", "Nginx caches images"]:
        remember(project, text)
    with pytest.raises(trash.TooManyToDelete):
        trash.delete_many(Memory.objects.all(), reason="too many")
    assert not Memory.objects.filter(status=MemoryStatus.DELETED).exists()
    assert not DeletionRecord.objects.exists()


def test_who_deleted_names_a_token_from_the_record(project):
    memory = remember(project, "We deploy on Fridays")
    trash.delete(memory, by="token mem_ab12…", reason="agent cleanup")
    memory.refresh_from_db()
    assert deleted_by_labels([memory]) == {memory.pk: "token mem_ab12…"}
