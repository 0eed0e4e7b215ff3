"""The rules of bulk deletion and restore, whoever calls them: only live sessions move, those
already in the trash are counted, at most MAX_BULK at a time, all in one transaction."""

from __future__ import annotations

import pytest

from sessions.forget import bulk
from sessions.forget.bulk import (
    NothingToDelete,
    TooManyToDelete,
    plan_bulk_delete,
    restore_many,
    soft_delete_many,
)
from sessions.forget.lifecycle import soft_delete
from sessions.models import Session
from tests.factories import ProjectFactory, SessionFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def three(project):
    return [SessionFactory(project=project, message_count=n) for n in (1, 2, 4)]


def test_the_plan_counts_what_moves_and_what_is_already_in_the_trash(project, three, user):
    soft_delete(three[0])
    short = ProjectFactory(team=project.team, trash_days=7)
    SessionFactory(project=short, message_count=8, size_bytes=100)
    plan = plan_bulk_delete(Session.objects.filter(team_id=project.team_id))
    assert (plan.sessions, plan.messages, plan.already) == (3, 14, 1)
    assert (plan.min_days, plan.max_days) == (7, project.trash_days)

    result = soft_delete_many(plan, by=user, reason="cleanup")
    assert (result.done, result.messages, result.skipped) == (3, 14, 0)
    moved = Session.objects.filter(team_id=project.team_id, delete_reason="cleanup")
    assert moved.count() == 3 and {s.deleted_by for s in moved} == {user}


def test_nothing_to_delete_says_how_many_are_already_in_the_trash(three):
    for session in three[:2]:
        soft_delete(session)
    selected = Session.objects.filter(pk__in=[s.pk for s in three[:2]])
    with pytest.raises(NothingToDelete) as refused:
        plan_bulk_delete(selected)
    assert refused.value.already == 2
    with pytest.raises(NothingToDelete) as refused:
        plan_bulk_delete(Session.objects.none())
    assert refused.value.already == 0


def test_more_than_max_bulk_is_refused(three, monkeypatch):
    monkeypatch.setattr(bulk, "MAX_BULK", 2)
    with pytest.raises(TooManyToDelete) as refused:
        plan_bulk_delete(Session.objects.all())
    assert refused.value.count == 3
    assert Session.objects.alive().count() == 3


def test_a_session_deleted_meanwhile_is_left_out_not_an_error(three):
    plan = plan_bulk_delete(Session.objects.all())
    soft_delete(three[1])  # someone else, between the confirmation page and the click
    result = soft_delete_many(plan, by=None)
    assert (result.done, result.messages, result.skipped) == (2, 5, 0)
    assert Session.objects.alive().count() == 0


def test_restore_many_skips_what_is_not_in_the_trash(three):
    soft_delete(three[0])
    soft_delete(three[2])
    result = restore_many(Session.objects.all())
    assert (result.done, result.messages, result.skipped) == (2, 5, 1)
    assert Session.objects.in_trash().count() == 0
