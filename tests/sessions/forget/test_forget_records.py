"""Deletion records: every deletion leaves one in its transaction, restores and purges are
noted on the record that moved the session, and records outlive the purge."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessions.filters import Filters
from sessions.forget import bulk
from sessions.forget.bulk import plan_bulk_delete, restore_many, soft_delete_many
from sessions.forget.lifecycle import LifecycleConflict, purge, restore, soft_delete
from sessions.forget.records import criteria_of, record_state
from sessions.models import DeletionRecord, Session
from teams.access import TokenPrincipal
from teams.models import ApiToken
from tests.factories import ProjectFactory, SessionFactory

pytestmark = pytest.mark.django_db


def test_a_soft_delete_leaves_one_session_record(project, user):
    session = SessionFactory(project=project, message_count=3, size_bytes=120)
    soft_delete(session, by=user, reason="privacy request")
    [record] = DeletionRecord.objects.all()
    assert (record.scope, record.actor, record.deleted_by, record.reason) == (
        "session",
        user.username,
        user,
        "privacy request",
    )
    assert (record.sessions, record.messages, record.bytes) == (1, 3, 120)
    assert record.session_ids == [session.public_id]
    assert record.team_id == project.team_id and record.project_label == str(project)
    assert record.recovery_deadline - session.deleted_at < timedelta(seconds=5) + timedelta(
        days=project.trash_days
    )
    assert record_state(record) == "in_trash"


def test_deleting_what_is_in_the_trash_is_a_conflict_with_its_state_and_no_new_record(
    project, user
):
    session = SessionFactory(project=project)
    soft_delete(session, by=user)
    with pytest.raises(LifecycleConflict) as conflict:
        soft_delete(session, by=user)
    state = conflict.value.state
    assert state["state"] == "in_trash" and state["deleted_by"] == user.username
    assert state["recovery_deadline"].startswith(str(session.deleted_at.date() + timedelta(30)))
    assert DeletionRecord.objects.count() == 1
    with pytest.raises(LifecycleConflict) as conflict:
        restore(SessionFactory(project=project))
    assert conflict.value.state == {"state": "alive"}


def test_a_token_is_named_by_its_prefix(project):
    token, _ = ApiToken.issue(project, name="ci")
    soft_delete(SessionFactory(project=project), by=TokenPrincipal(token))
    record = DeletionRecord.objects.get()
    assert record.actor == f"token {token.prefix}…" and record.deleted_by is None


def test_restore_counts_on_the_latest_record_and_purge_marks_it_and_keeps_it(project):
    session = SessionFactory(project=project)
    soft_delete(session, reason="first")
    restore(session)
    soft_delete(session, reason="second")
    first, _ = DeletionRecord.objects.order_by("id")
    first.refresh_from_db()
    assert (first.restored_sessions, record_state(first)) == (1, "restored")
    restore(session)
    soft_delete(session, reason="third")
    purge(session)
    records = list(DeletionRecord.objects.order_by("id"))
    assert [r.restored_sessions for r in records] == [1, 1, 0]
    assert [record_state(r) for r in records] == ["restored", "restored", "purged"]
    assert not Session.objects.filter(pk=session.pk).exists()


def test_records_survive_the_purge_of_their_project(project):
    session = SessionFactory(project=project)
    soft_delete(session)
    purge(session)
    project.delete()
    record = DeletionRecord.objects.get()
    assert record.project is None and record.project_label  # still says which one it was


def test_a_bulk_delete_leaves_one_record_per_project(project, user):
    other = ProjectFactory(team=project.team, trash_days=7)
    mine = [SessionFactory(project=project, message_count=2, size_bytes=10) for _ in range(3)]
    theirs = SessionFactory(project=other, message_count=5, size_bytes=50)
    plan = plan_bulk_delete(Session.objects.filter(team_id=project.team_id))
    result = soft_delete_many(plan, by=user, reason="cleanup")
    assert (result.done, result.messages, result.size) == (4, 11, 80)
    records = {r.project_id: r for r in result.records}
    assert set(records) == {project.pk, other.pk}
    assert records[project.pk].scope == "selection"
    assert sorted(records[project.pk].session_ids) == sorted(s.public_id for s in mine)
    assert (records[other.pk].sessions, records[other.pk].messages) == (1, 5)
    assert records[other.pk].session_ids == [theirs.public_id]
    assert DeletionRecord.objects.count() == 2  # none per session

    restore_many(Session.objects.filter(pk__in=[mine[0].pk, theirs.pk]))
    records[project.pk].refresh_from_db()
    records[other.pk].refresh_from_db()
    assert record_state(records[project.pk]) == "partly_restored"
    assert record_state(records[other.pk]) == "restored"


def test_a_filter_delete_keeps_its_criteria_not_content(project, user):
    SessionFactory(project=project, agent_name="coder", topics=["auth"])
    filters = Filters(agent="coder", topic="auth")
    plan = plan_bulk_delete(filters.apply(Session.objects.all()))
    [record] = soft_delete_many(plan, by=user, reason="r", criteria=criteria_of(filters)).records
    assert record.scope == "filter"
    assert record.criteria == {"agent": "coder", "topic": "auth"}


def test_a_failed_bulk_delete_leaves_neither_moves_nor_records(project, monkeypatch):
    SessionFactory(project=project)
    SessionFactory(project=project)
    plan = plan_bulk_delete(Session.objects.all())

    def broken(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(bulk, "record_deletion", broken)
    with pytest.raises(RuntimeError):
        soft_delete_many(plan, by=None)
    assert Session.objects.in_trash().count() == 0
    assert DeletionRecord.objects.count() == 0


ACTIONS = st.lists(st.sampled_from(["delete", "restore", "purge"]), max_size=8)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(actions=ACTIONS)
def test_any_sequence_of_actions_keeps_the_records_true(actions):
    """Whatever people do, in whatever order: one record per delete that happened, none per
    refused one; each restore counted on the record that moved it; a purge marks the last."""
    session = SessionFactory(project=ProjectFactory())
    deletes = restores = 0
    purged = False
    for name in actions:
        if purged:
            break
        try:
            if name == "delete":
                soft_delete(session)
                deletes += 1
            elif name == "restore":
                restore(session)
                restores += 1
            else:
                purge(session)
                purged = True
        except LifecycleConflict as conflict:
            assert conflict.state["state"] in ("in_trash", "alive")
    records = list(DeletionRecord.objects.filter(session_ids__contains=[session.public_id]))
    assert len(records) == deletes
    assert sum(r.restored_sessions for r in records) == restores
    assert all(r.restored_sessions <= 1 for r in records)
    states = [record_state(r) for r in sorted(records, key=lambda r: r.pk)]
    if purged:
        assert states[-1] == "purged" and set(states[:-1]) <= {"restored"}
    elif deletes:
        expected = "restored" if deletes == restores else "in_trash"
        assert states[-1] == expected and set(states[:-1]) <= {"restored"}
