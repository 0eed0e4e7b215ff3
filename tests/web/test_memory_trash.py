"""The memory trash pages: the memories tab of the trash (deadline, who and why, restore for
admins), a restore after the deadline told rather than done, and deleting by filter from
the Memories page (a preview that changes nothing, then a confirmation). Another team's
memory is a 404; members and viewers may not delete or restore."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from memories.capture.record import MemoryDraft, record
from memories.forget import trash
from memories.models import Memory, MemoryStatus, MemoryType
from sessions.models import DeletionRecord
from tests.factories import ProjectFactory, TeamFactory

pytestmark = pytest.mark.django_db

TRASH = reverse("web:memory-trash")
BULK = reverse("web:memory-bulk-delete")


def remember(project, content, *, topic="", day=11):
    draft = MemoryDraft(
        type=MemoryType.FACT,
        content=content,
        topic=topic,
        occurred_at=datetime(2026, 1, day, 12, tzinfo=UTC),
    )
    return record(project, draft).memory


@pytest.fixture
def gone(project, admin):
    memory = remember(project, "The staging host is db-7")
    return trash.delete(memory, by=admin, reason="moved hosts")


def restore_url(memory):
    return reverse("web:memory-restore", args=[memory.project_id, memory.public_id])


def test_the_trash_lists_deleted_memories_with_their_deadline(admin_client, gone, admin):
    page = admin_client.get(TRASH).content.decode()
    assert gone.public_id in page and "moved hosts" in page and admin.username in page
    deadline = gone.deleted_at + timedelta(days=gone.project.trash_days)
    assert f"{deadline:%b} {deadline.day}, {deadline.year}" in page
    assert restore_url(gone) in page
    assert reverse("web:trash") in page  # the sessions tab


def test_viewers_see_the_trash_but_cannot_restore(viewer_client, gone):
    page = viewer_client.get(TRASH).content.decode()
    assert gone.public_id in page and restore_url(gone) not in page
    assert viewer_client.post(restore_url(gone)).status_code == 403
    assert Memory.objects.get(pk=gone.pk).status == MemoryStatus.DELETED


def test_an_admin_restores_one(admin_client, gone):
    response = admin_client.post(restore_url(gone))
    assert response.status_code == 302
    assert Memory.objects.get(pk=gone.pk).status == MemoryStatus.ACTIVE
    assert DeletionRecord.objects.get(scope="memory").restored_memories == 1


def test_a_restore_after_the_deadline_is_told_not_done(admin_client, gone):
    Memory.objects.filter(pk=gone.pk).update(deleted_at=timezone.now() - timedelta(days=400))
    response = admin_client.post(restore_url(gone), follow=True)
    assert "recovery deadline" in response.content.decode()
    assert Memory.objects.get(pk=gone.pk).status == MemoryStatus.DELETED


def test_another_teams_deleted_memory_is_a_404_and_not_listed(admin_client, db):
    theirs = remember(ProjectFactory(team=TeamFactory()), "Their secret")
    trash.delete(theirs, reason="theirs")
    assert "Their secret" not in admin_client.get(TRASH).content.decode()
    assert admin_client.post(restore_url(theirs)).status_code == 404


RESTORE_SELECTED = reverse("web:memory-restore-selected")


def ticked(*memories) -> dict:
    return {"memory": [f"{m.project_id}:{m.public_id}" for m in memories]}


def test_an_admin_restores_the_ticked_ones_and_is_told_of_one_past_its_deadline(
    admin_client, project, admin
):
    kept, back, late = (
        trash.delete(remember(project, text), by=admin, reason="tidy")
        for text in ("Kept in the trash", "Brought back", "Too late")
    )
    Memory.objects.filter(pk=late.pk).update(deleted_at=timezone.now() - timedelta(days=400))
    page = admin_client.get(TRASH).content.decode()
    assert RESTORE_SELECTED in page and f'value="{back.project_id}:{back.public_id}"' in page

    response = admin_client.post(RESTORE_SELECTED, ticked(back, late), follow=True)
    body = response.content.decode()
    assert "Restored 1 memory." in body and "recovery deadline" in body
    status = dict(Memory.objects.values_list("pk", "status"))
    assert status[back.pk] == MemoryStatus.ACTIVE
    assert status[late.pk] == status[kept.pk] == MemoryStatus.DELETED


def test_restoring_ticked_ones_asks_for_an_admin_and_never_reaches_another_team(
    admin_client, viewer_client, gone
):
    assert viewer_client.post(RESTORE_SELECTED, ticked(gone)).status_code == 403
    theirs = remember(ProjectFactory(team=TeamFactory()), "Their secret")
    trash.delete(theirs, reason="theirs")
    response = admin_client.post(RESTORE_SELECTED, ticked(theirs), follow=True)
    assert "None of the selected memories is in the trash" in response.content.decode()
    assert Memory.objects.get(pk=theirs.pk).status == MemoryStatus.DELETED
    assert Memory.objects.get(pk=gone.pk).status == MemoryStatus.DELETED


@pytest.fixture
def three(project):
    return [
        remember(project, "Redis holds the cache", topic="cache", day=5),
        remember(project, "Nginx caches images", topic="cache", day=20),
        remember(project, "Deploys run on Fridays", topic="deploys", day=5),
    ]


def test_a_preview_counts_and_changes_nothing(admin_client, three):
    page = admin_client.post(BULK, {"topic": "cache", "preview": "1"}).content.decode()
    assert "2 memories" in page and "Redis holds the cache" in page
    assert not Memory.objects.filter(status=MemoryStatus.DELETED).exists()


def test_confirming_the_preview_moves_them_to_the_trash(admin_client, three):
    preview = admin_client.post(BULK, {"topic": "cache", "preview": "1"})
    previewed = preview.context["previewed"]
    response = admin_client.post(
        BULK,
        {"topic": "cache", "reason": "cache rewritten", "confirm": "1", "previewed": previewed},
    )
    assert response.status_code == 302 and response.url == TRASH
    deleted = set(
        Memory.objects.filter(status=MemoryStatus.DELETED).values_list("topic", flat=True)
    )
    assert deleted == {"cache"}
    assert DeletionRecord.objects.get(scope="memory").memories == 2


def test_filters_changed_after_the_preview_are_previewed_again(admin_client, three):
    previewed = admin_client.post(BULK, {"topic": "cache", "preview": "1"}).context["previewed"]
    response = admin_client.post(
        BULK, {"topic": "deploys", "reason": "x", "confirm": "1", "previewed": previewed}
    )
    assert response.status_code == 200  # a new preview, nothing deleted
    assert not Memory.objects.filter(status=MemoryStatus.DELETED).exists()


def test_a_date_range_includes_both_days_and_an_inverted_one_is_refused(admin_client, three):
    page = admin_client.post(
        BULK, {"since": "2026-01-05", "until": "2026-01-05", "preview": "1"}
    ).content.decode()
    assert "2 memories" in page  # both memories said on the 5th
    refused = admin_client.post(BULK, {"since": "2026-01-20", "until": "2026-01-05"})
    assert "Said from" in refused.content.decode() and refused.context["plan"] is None


def test_no_filter_needs_the_all_box_and_a_delete_needs_a_reason(admin_client, three):
    refused = admin_client.post(BULK, {"preview": "1"})
    assert refused.context["plan"] is None and "tick this" in refused.content.decode()
    previewed = admin_client.post(BULK, {"all": "on", "preview": "1"}).context["previewed"]
    no_reason = admin_client.post(BULK, {"all": "on", "confirm": "1", "previewed": previewed})
    assert no_reason.status_code == 200 and "Say why" in no_reason.content.decode()
    assert not Memory.objects.filter(status=MemoryStatus.DELETED).exists()


def test_members_may_not_delete_by_filter(member_client, three):
    assert member_client.get(BULK).status_code == 403
    assert member_client.post(BULK, {"all": "on", "preview": "1"}).status_code == 403


def test_the_memories_page_links_to_the_bulk_delete_for_admins(admin_client, member_client):
    assert BULK in admin_client.get(reverse("web:memories")).content.decode()
    assert BULK not in member_client.get(reverse("web:memories")).content.decode()


def test_the_deletions_page_shows_a_memory_record_with_its_ids_and_kinds(admin_client, gone):
    page = admin_client.get(reverse("web:deletions")).content.decode()
    assert gone.public_id in page and "1 memory" in page and "1 fact" in page
    assert "The staging host" not in page  # never the content
