"""Diaries follow their sessions (memories/diary/due.py): what changes a past day's material
marks it due, the beat task distils every marked day, and ``manage.py distill_diaries``
backfills a range."""

from __future__ import annotations

import io
import re
from datetime import UTC, date, datetime, timedelta

import pytest
from django.core.management import CommandError, call_command

from memories.diary import due
from memories.diary.distill import distill_day
from memories.diary.models import DiaryDue, DiaryEntry
from memories.tasks import distill_due_diaries
from sessions.capture.service import append_messages, capture_session
from sessions.forget.lifecycle import restore, soft_delete
from tests.memories.diary.conftest import DAY
from transcripts.base import ParsedMessage, ParsedSession

pytestmark = pytest.mark.django_db


def listed(session) -> bool:
    return DiaryEntry.objects.filter(sessions__contains=[session.public_id]).exists()


def due_days(team) -> set[date]:
    return set(DiaryDue.objects.filter(team=team).values_list("day", flat=True))


def test_a_trashed_session_leaves_the_diary_at_once_and_comes_back_on_restore(sam, project):
    distill_day(DAY)
    cathy, rex = sam["cathy"], sam["rex"]
    assert listed(cathy) and listed(rex)

    soft_delete(cathy, reason="test")
    assert not listed(cathy), "its entries go in the trashing's own transaction"
    assert due_days(project.team) == {DAY}
    distill_due_diaries()
    assert listed(rex) and not listed(cathy)
    assert not DiaryEntry.objects.filter(text__icontains="Lisbon").exists()
    assert due_days(project.team) == set()

    restore(cathy)
    assert due_days(project.team) == {DAY}
    distill_due_diaries()
    assert listed(cathy)


def test_a_session_imported_for_a_past_day_marks_that_day_and_todays_do_not(project):
    past = datetime(2025, 3, 4, 10, tzinfo=UTC)
    parsed = ParsedSession(
        source_format="api",
        agent_name="chat",
        user_name="ana",
        started_at=past,
        ended_at=past + timedelta(hours=1),
        external_id="imported-1",
        messages=[ParsedMessage(role="user", content="We chose the blue logo.", timestamp=past)],
    )
    session = capture_session(project, parsed).session
    assert due_days(project.team) == {date(2025, 3, 4)}
    distill_due_diaries()
    assert listed(session)

    today = ParsedSession(
        source_format="api",
        agent_name="chat",
        user_name="ana",
        started_at=datetime.now(UTC),
        messages=[ParsedMessage(role="user", content="Hello")],
    )
    capture_session(project, today)
    assert due_days(project.team) == set(), "today is distilled by the daily run"

    # An append to the past session marks its day again.
    append_messages(session, [ParsedMessage(role="assistant", content="Blue it is.")])
    assert due_days(project.team) == {date(2025, 3, 4)}


def test_a_day_marked_again_while_it_is_distilled_stays_marked(sam, project, monkeypatch):
    due.mark([(project.team_id, DAY)])
    import memories.diary.distill as distill

    real = distill.distill_day

    def meanwhile(day, **kwargs):
        written = real(day, **kwargs)
        due.mark([(project.team_id, day)])  # a session trashed during the distillation
        return written

    monkeypatch.setattr(distill, "distill_day", meanwhile)
    due.distill_due()
    assert due_days(project.team) == {DAY}
    monkeypatch.setattr(distill, "distill_day", real)
    due.distill_due()
    assert due_days(project.team) == set()


def test_the_command_backfills_a_range_with_its_counts(sam, project):
    out = io.StringIO()
    call_command("distill_diaries", since="2026-01-10", until="2026-01-12", stdout=out)
    assert "1 team-day(s) from 2026-01-10 to 2026-01-12" in out.getvalue()
    assert "3 diary entr(ies) written over 1 day(s)" in out.getvalue()
    assert {e.day for e in DiaryEntry.objects.all()} == {DAY}
    assert due_days(project.team) == set()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"since": "yesterday"}, "'yesterday' is not a day (YYYY-MM-DD)"),
        ({"since": "2026-01-12", "until": "2026-01-10"}, "is before --since"),
        ({"since": "2026-01-10", "team": "nobody"}, "no team 'nobody'"),
    ],
)
def test_the_command_refuses_bad_input_and_distils_nothing(sam, options, message):
    with pytest.raises(CommandError, match=re.escape(message)):
        call_command("distill_diaries", stdout=io.StringIO(), **options)
    assert not DiaryEntry.objects.exists()
