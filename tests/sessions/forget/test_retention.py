"""Retention: the daily run moves exactly the sessions past their project's retention to the
trash (one deletion record per project and run), the purge removes exactly those past the
trash window, overlapping runs move nothing twice, and the dry run counts what a run would do."""

from __future__ import annotations

import json
import threading
from contextlib import contextmanager
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessions import tasks
from sessions.forget import lifecycle, retention
from sessions.forget.lifecycle import purge_expired, restore, soft_delete
from sessions.forget.retention import enforce_retention, next_run, retention_plan
from sessions.models import DeletionRecord, DeletionScope, Session
from tests.factories import MessageFactory, ProjectFactory, SessionFactory

HOUR = timedelta(hours=1)


def aged(project, *, started: float, ended: float | None, written: float, now, deleted=None):
    """A session of ``project`` that started, ended and was last written ``…`` hours before
    ``now`` (and was trashed ``deleted`` hours before it, if given)."""
    session = SessionFactory(project=project, message_count=3, size_bytes=120)
    Session.objects.filter(pk=session.pk).update(
        started_at=now - started * HOUR,
        ended_at=None if ended is None else now - ended * HOUR,
        updated_at=now - written * HOUR,
        deleted_at=None if deleted is None else now - deleted * HOUR,
    )
    session.refresh_from_db()
    return session


def last_activity(session):
    return max(session.ended_at or session.started_at, session.updated_at)


hours = st.integers(0, 24 * 60)
a_session = st.fixed_dictionaries(
    {
        "started": hours,
        "ended": st.one_of(st.none(), hours),
        "written": hours,
        "deleted": st.one_of(st.none(), hours),
    }
)


@pytest.mark.django_db
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    specs=st.lists(a_session, max_size=12),
    days=st.integers(1, 60),
    trash_days=st.integers(1, 60),
    batch=st.integers(1, 5),
    purge_messages=st.integers(1, 10),  # each session has 3: one, two or three per purge
)
def test_the_run_moves_exactly_the_sessions_past_retention_and_purges_past_the_trash(
    specs, days, trash_days, batch, purge_messages, monkeypatch
):
    monkeypatch.setattr(retention, "BATCH", batch)
    monkeypatch.setattr(lifecycle, "PURGE_BATCH", batch)
    monkeypatch.setattr(lifecycle, "PURGE_BATCH_MESSAGES", purge_messages)
    now = timezone.now().replace(microsecond=0)
    with transaction.atomic():
        project = ProjectFactory(retention_days=days, trash_days=trash_days)
        kept_forever = ProjectFactory(team=project.team)  # no retention
        sessions = [aged(project, now=now, **spec) for spec in specs]
        untouched = aged(kept_forever, started=24 * 400, ended=None, written=24 * 400, now=now)
        live = [s for s in sessions if s.deleted_at is None]
        due = {s.pk for s in live if last_activity(s) < now - timedelta(days=days)}
        expired = {
            s.pk
            for s in sessions
            if s.deleted_at is not None and s.deleted_at <= now - timedelta(days=trash_days)
        }
        plan = retention_plan(project, days, now=now)
        assert (plan.sessions, plan.live_sessions, plan.purge_sessions) == (
            len(due),
            len(live),
            len(expired),
        )

        summary = enforce_retention(now=now)
        json.dumps(summary)  # what the task returns
        purged = purge_expired(now=now)

        assert purged == len(expired)
        remaining = Session.objects.filter(project=project)
        assert set(remaining.alive().values_list("pk", flat=True)) == {s.pk for s in live} - due
        moved = remaining.filter(delete_reason__startswith="retention:", deleted_at=now)
        assert set(moved.values_list("pk", flat=True)) == due
        assert not remaining.filter(pk__in=expired).exists()
        assert Session.objects.alive().filter(pk=untouched.pk).exists()
        records = DeletionRecord.objects.filter(project=project, scope=DeletionScope.RETENTION)
        if due:
            [record] = records
            assert (record.sessions, record.messages, record.bytes) == (
                len(due),
                3 * len(due),
                120 * len(due),
            )
            moved_ids = set(Session.objects.filter(pk__in=due).values_list("public_id", flat=True))
            assert sorted(record.session_ids) == sorted(moved_ids)
            assert record.actor == "retention policy"
            assert record.reason == f"retention: older than {days} days"
        else:
            assert not records.exists()
        transaction.set_rollback(True)


@pytest.mark.django_db
def test_an_ongoing_session_is_kept_though_it_started_long_ago(project):
    """An agent appending messages without timestamps never moves ``ended_at``: the last
    write keeps the session young."""
    now = timezone.now()
    project.retention_days = 7
    project.save()
    ongoing = aged(project, started=24 * 30, ended=None, written=1, now=now)
    finished = aged(project, started=24 * 30, ended=24 * 20, written=24 * 20, now=now)
    enforce_retention(now=now)
    assert Session.objects.alive().filter(pk=ongoing.pk).exists()
    assert Session.objects.in_trash().filter(pk=finished.pk).exists()


@pytest.mark.django_db
def test_a_session_restored_from_the_trash_is_not_moved_again_by_the_next_run(project):
    now = timezone.now()
    project.retention_days = 7
    project.save()
    session = aged(project, started=24 * 30, ended=24 * 30, written=24 * 30, now=now)
    enforce_retention(now=now)
    session.refresh_from_db()
    restore(session)
    assert enforce_retention(now=now + timedelta(days=1))["sessions"] == 0
    assert Session.objects.alive().filter(pk=session.pk).exists()
    assert enforce_retention(now=now + timedelta(days=8))["sessions"] == 1


@pytest.mark.django_db
def test_the_plan_counts_messages_bytes_share_and_a_shorter_trash(project):
    now = timezone.now()
    for _ in range(3):
        aged(project, started=24 * 100, ended=24 * 99, written=24 * 99, now=now)
    for _ in range(7):
        aged(project, started=24, ended=None, written=1, now=now)
    aged(project, started=24 * 100, ended=None, written=24 * 10, now=now, deleted=24 * 10)
    plan = retention_plan(project, 30, now=now)
    assert (plan.sessions, plan.messages, plan.bytes, plan.live_sessions) == (3, 9, 360, 10)
    assert plan.percent == pytest.approx(30.0) and plan.needs_confirmation
    assert plan.purge_sessions == 0  # the trash keeps it 30 days
    assert "3 of 10 live sessions (30.0 %" in plan.summary()

    shorter = retention_plan(project, None, now=now, trash_days=5)
    assert (shorter.sessions, shorter.purge_sessions, shorter.purge_messages) == (0, 1, 3)
    assert shorter.purge_percent == pytest.approx(100 / 11) and not shorter.needs_confirmation
    assert retention_plan(project, 200, now=now).needs_confirmation is False


def test_the_next_run_is_the_daily_beat_time():
    now = timezone.now().replace(hour=4, minute=0, second=0, microsecond=0)
    assert next_run(now) == now.replace(minute=30)
    later = now.replace(hour=5)
    assert next_run(later) == now.replace(minute=30) + timedelta(days=1)


@pytest.mark.django_db
def test_the_task_logs_and_returns_what_it_moved(project, caplog):
    project.retention_days = 1
    project.save()
    old = aged(project, started=72, ended=72, written=72, now=timezone.now())
    MessageFactory(session=old, seq=0)
    with caplog.at_level("INFO", logger="sessions.tasks"):
        summary = tasks.enforce_retention()
    assert summary["sessions"] == 1 and summary["moved"][0]["project"] == str(project)
    assert json.loads(json.dumps(summary)) == summary
    assert "retention moved 1 session(s)" in caplog.text
    soft_delete_days_ago = Session.objects.filter(pk=old.pk)
    soft_delete_days_ago.update(deleted_at=timezone.now() - timedelta(days=project.trash_days))
    assert tasks.purge_trash() == 1
    assert DeletionRecord.objects.get(project=project).purged_at is not None


# --- overlapping runs ---------------------------------------------------------------------


def run_together(count: int, target) -> list:
    """Run ``target`` in ``count`` threads at once (each with its own database connection)."""
    barrier = threading.Barrier(count)
    results, errors = [None] * count, []

    def run(i):
        try:
            barrier.wait()
            results[i] = target()
        except Exception as exc:  # reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    return results


@contextmanager
def always_held(project_id):
    yield True


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("with_lock", [True, False], ids=["project-lock", "conditional-update"])
def test_overlapping_runs_move_each_session_once(monkeypatch, with_lock):
    """Two runs at once: with the project lock, one of them does the project; without it (the
    lock bypassed), the conditional moves still leave every session moved exactly once."""
    monkeypatch.setattr(retention, "BATCH", 7)
    if not with_lock:
        monkeypatch.setattr(retention, "_project_lock", always_held)
    now = timezone.now()
    project = ProjectFactory(retention_days=10)
    old = [
        aged(project, started=24 * 30, ended=24 * 29, written=24 * 29, now=now) for _ in range(60)
    ]
    young = aged(project, started=24, ended=None, written=1, now=now)

    results = run_together(2, lambda: enforce_retention(now=now))

    assert sum(r["sessions"] for r in results) == len(old)
    assert Session.objects.in_trash().count() == len(old)
    assert Session.objects.alive().get() == young
    records = DeletionRecord.objects.filter(project=project)
    assert sum(r.sessions for r in records) == len(old)
    assert sum(r.messages for r in records) == 3 * len(old)
    ids = [i for r in records for i in r.session_ids]
    assert sorted(ids) == sorted(s.public_id for s in old)
    if with_lock:
        assert records.count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_session_trashed_by_someone_meanwhile_is_not_moved_again(monkeypatch):
    now = timezone.now()
    project = ProjectFactory(retention_days=10)
    first, second = (
        aged(project, started=24 * 30, ended=24 * 29, written=24 * 29, now=now) for _ in range(2)
    )
    real = retention.trash_locked

    def someone_else_first(sessions, **how):
        soft_delete(first, reason="by hand")
        return real(sessions, **how)

    monkeypatch.setattr(retention, "trash_locked", someone_else_first)
    summary = enforce_retention(now=now)
    assert summary["sessions"] == 1
    first.refresh_from_db()
    assert first.delete_reason == "by hand"
    record = DeletionRecord.objects.get(project=project, scope="retention")
    assert record.session_ids == [second.public_id]
