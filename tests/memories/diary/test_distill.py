"""Daily distillation: one entry per person, character and day, shared facts in _shared,
re-runs update and never duplicate (also property-style), stale entries go."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memories.diary.distill import distill_day
from memories.diary.models import SHARED, DiaryEntry
from memories.tasks import distill_diaries
from tests.memories.diary.conftest import DAY

pytestmark = pytest.mark.django_db


def entries():
    return {(e.person, e.character, e.day): e for e in DiaryEntry.objects.all()}


def test_one_entry_per_person_character_and_day_with_its_sections(sam):
    assert distill_day(DAY) == 3
    found = entries()
    assert set(found) == {("sam", "cathy", DAY), ("sam", "rex", DAY), ("sam", SHARED, DAY)}
    cathy = found[("sam", "cathy", DAY)]
    assert cathy.sessions == [sam["cathy"].public_id]
    assert "Lisbon" in cathy.happened
    assert cathy.decisions == ["Take the night train to Lisbon"]
    assert cathy.preferences == []  # shared: in _shared only
    assert cathy.facts == ["Sam's sister lives in Porto"]
    assert cathy.text.startswith("# sam with cathy — 2026-01-11")
    assert "## Decisions\n- Take the night train to Lisbon" in cathy.text
    assert cathy.embedding is not None and cathy.method == "offline"
    rex = found[("sam", "rex", DAY)]
    assert "parser" in rex.happened and rex.decisions == [] and rex.facts == []
    shared = found[("sam", SHARED, DAY)]
    assert shared.preferences == ["Sam is vegetarian"] and shared.facts == []


def test_an_unfinished_session_is_an_open_thread(project, sam):
    sam["rex"].status = "interrupted"
    sam["rex"].save()
    distill_day(DAY)
    rex = entries()[("sam", "rex", DAY)]
    assert rex.open_threads == [f"{sam['rex'].public_id} was left interrupted"]


def test_a_rerun_updates_and_a_trashed_session_removes_its_entry(sam):
    distill_day(DAY)
    first = entries()[("sam", "rex", DAY)]
    sam["rex"].title = "Parser review"
    sam["rex"].save()
    distill_day(DAY)
    again = entries()[("sam", "rex", DAY)]
    assert again.pk == first.pk and "Parser review" in again.happened
    assert DiaryEntry.objects.count() == 3
    sam["rex"].deleted_at = sam["rex"].started_at
    sam["rex"].save()
    distill_day(DAY)
    assert ("sam", "rex", DAY) not in entries()
    assert DiaryEntry.objects.count() == 2


def test_other_days_and_sessions_without_a_person_are_left_alone(project, sam):
    from tests.memories.diary.conftest import chat

    chat(project, "", "cathy", [("user", "anonymous")])
    assert distill_day(DAY + timedelta(days=1)) == 0
    assert distill_day(DAY) == 3


def test_the_beat_task_distills_a_given_day(sam):
    assert distill_diaries("2026-01-11") == {"2026-01-11": 3}


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(runs=st.lists(st.sampled_from(["distill", "retitle", "trash", "restore"]), max_size=6))
def test_any_sequence_of_reruns_keeps_one_entry_per_key_matching_a_fresh_run(sam, runs):
    """Whatever happens between runs, the entries after a re-run are those a first run
    over the same data writes: one per key, never duplicated."""
    session = sam["rex"]
    for step in runs:
        if step == "distill":
            distill_day(DAY)
        elif step == "retitle":
            session.title = f"{session.title}x"[:50]
            session.save()
        elif step == "trash":
            session.deleted_at = session.started_at
            session.save()
        else:
            session.deleted_at = None
            session.save()
    distill_day(DAY)
    after_rerun = {k: (e.text, e.sessions) for k, e in entries().items()}
    DiaryEntry.objects.all().delete()
    distill_day(DAY)
    fresh = {k: (e.text, e.sessions) for k, e in entries().items()}
    assert after_rerun == fresh
    assert DiaryEntry.objects.count() == len(fresh)


def test_with_the_optional_model_configured_it_writes_what_happened(sam, settings):
    from tests.sessions.enrich.test_summary import CANNED, Server

    with Server("ok") as server:
        settings.SUMMARY_LLM_URL, settings.SUMMARY_LLM_MODEL = server.url, "tiny"
        distill_day(DAY)
    cathy = entries()[("sam", "cathy", DAY)]
    assert cathy.method == "llm" and cathy.happened == CANNED
    assert "Lisbon" in server.requests[0]["body"]["messages"][1]["content"]
    assert cathy.decisions == ["Take the night train to Lisbon"]  # the sections stay offline


def test_when_the_model_fails_the_offline_entry_is_written(sam, settings):
    from tests.sessions.enrich.test_summary import Server

    with Server("error") as server:
        settings.SUMMARY_LLM_URL, settings.SUMMARY_LLM_MODEL = server.url, "tiny"
        distill_day(DAY)
    cathy = entries()[("sam", "cathy", DAY)]
    assert cathy.method == "offline" and "Lisbon" in cathy.happened
