"""Diaries per audience (issue 38, docs/visibility.md): the team's entry holds what the team
reads (its sessions, the summaries of 'summary' sessions, memories not private); each owner
of private sessions gets a private entry only they read; a session's change of visibility
takes its entries away at once and writes them again for the new audience; erasing a
private session erases its private entry. Real PostgreSQL."""
# ruff: noqa: F811  (the people fixture, imported)

from __future__ import annotations

import pytest

from memories.capture.record import MemoryDraft, record
from memories.diary import due
from memories.diary.distill import distill_day
from memories.diary.models import DiaryEntry
from memories.models import Memory
from sessions import visibility as session_visibility
from sessions.forget.anonymize import AnonymizationConfig, anonymize_session, start_run
from sessions.forget.lifecycle import purge, soft_delete
from teams.models import Visibility
from tests.memories.diary.conftest import AT, DAY, chat
from tests.memories.visibility_people import people, reader  # noqa: F401

pytestmark = pytest.mark.django_db
DIARY = "/api/v1/diary"


@pytest.fixture
def day(project, people):
    """sam's day in alice's hands: a private chat with cathy (a private decision), a team
    review with rex, and a 'summary' chat with max whose messages the team does not read."""
    private = chat(
        project,
        "sam",
        "cathy",
        [("user", "I am interviewing at another company on Friday.")],
        owner=people.alice,
        visibility=Visibility.PRIVATE,
    )
    team = chat(
        project,
        "sam",
        "rex",
        [("user", "Review the parser in src/parse.py please.")],
        at=AT.replace(hour=15),
        owner=people.alice,
        visibility=Visibility.TEAM,
    )
    summary = chat(
        project,
        "sam",
        "max",
        [("user", "The customer Acme pays 40k a year.")],
        at=AT.replace(hour=17),
        owner=people.alice,
        visibility=Visibility.SUMMARY,
        summary="Pricing discussed.",
    )
    record(project, MemoryDraft("decision", "Take Friday off for the interview", private))
    record(project, MemoryDraft("decision", "Price the plan per seat", summary, agent="max"))
    distill_day(DAY)
    return {"private": private, "team": team, "summary": summary}


def entries(people, who: str, **params) -> list[dict]:
    answer = people.client(who).get(DIARY, params)
    assert answer.status_code == 200, answer.json()
    return answer.json()["results"]


def texts(people, who: str) -> str:
    return "\n".join(e["text"] for e in entries(people, who))


def test_the_team_reads_the_teams_entries_and_the_owner_also_their_private_one(day, people):
    private = DiaryEntry.objects.get(character="cathy")
    assert (private.owner_id, private.visibility) == (people.alice.pk, Visibility.PRIVATE)
    assert "interview" in private.text
    for who in ("bob", "vera", "adam", "team_token"):  # the admin does not read it either
        characters = {e["character"] for e in entries(people, who)}
        assert characters == {"rex", "max"}, who
        assert "interview" not in texts(people, who), who
        found = entries(people, who, q="interview Friday")
        assert "cathy" not in {e["character"] for e in found}, who
    mine = {(e["character"], e["visibility"]) for e in entries(people, "alice")}
    assert mine == {("cathy", "private"), ("rex", "team"), ("max", "team")}
    assert {e["character"] for e in entries(people, "alice_token")} == {"cathy", "rex", "max"}


def test_a_summary_sessions_entry_holds_its_summary_and_accepted_memories_not_messages(day, people):
    entry = DiaryEntry.objects.get(character="max")
    assert entry.owner_id is None and entry.visibility == Visibility.TEAM
    assert "Pricing discussed." in entry.text
    assert "Price the plan per seat" in entry.text  # an active 'summary' memory
    assert "Acme" not in entry.text and "40k" not in entry.text


def test_the_diary_export_and_context_hold_only_what_the_reader_reads(day, people):
    import io
    import zipfile

    archive = people.client("bob").get(f"{DIARY}/export").content
    with zipfile.ZipFile(io.BytesIO(archive)) as files:
        body = "".join(files.read(name).decode() for name in files.namelist())
    assert "interview" not in body and "src/parse.py" in body
    for who, sees in (("bob", False), ("alice", True)):
        answer = people.client(who).post("/api/v1/context", {"query": "what do I know about sam?"})
        assert answer.status_code == 200, answer.content
        markdown = answer.json()["markdown"]
        assert markdown.startswith("## Diary: sam"), who
        assert ("interviewing" in markdown or "interview" in markdown) is sees, who


def test_a_session_made_private_leaves_the_teams_diary_at_once_and_becomes_its_owners(day, people):
    session_visibility.change(reader(people.alice), [day["team"]], Visibility.PRIVATE)
    # At once: the team's entry that listed it is gone, before any distillation.
    assert "rex" not in {e["character"] for e in entries(people, "bob")}
    due.distill_due()
    rex = DiaryEntry.objects.get(character="rex")
    assert (rex.owner_id, rex.visibility) == (people.alice.pk, Visibility.PRIVATE)
    assert "rex" not in {e["character"] for e in entries(people, "bob")}
    assert "rex" in {e["character"] for e in entries(people, "alice")}
    # And back: shared again, the team's entry returns and the private one goes.
    session_visibility.change(reader(people.alice), [day["team"]], Visibility.TEAM)
    due.distill_due()
    rex = DiaryEntry.objects.get(character="rex")
    assert (rex.owner_id, rex.visibility) == (None, Visibility.TEAM)


def test_a_shared_memory_moves_to_the_teams_entry(day, people):
    memory = Memory.objects.get(session=day["private"])
    people.client("alice").post(
        f"/api/v1/memories/{memory.public_id}/visibility", {"visibility": "team"}, format="json"
    )
    due.distill_due()
    team_cathy = DiaryEntry.objects.get(character="cathy", owner__isnull=True)
    assert "Take Friday off" in team_cathy.text
    assert "interviewing at another company" not in team_cathy.text  # the session stays hers


def test_a_purged_private_session_takes_its_private_entry_with_it(day, people):
    assert DiaryEntry.objects.filter(owner=people.alice).exists()
    session = day["private"]
    soft_delete(session)
    purge(session)
    assert not DiaryEntry.objects.filter(owner=people.alice).exists()
    due.distill_due()
    assert not DiaryEntry.objects.filter(owner=people.alice).exists()
    assert DiaryEntry.objects.filter(character="rex", owner__isnull=True).exists()


def test_an_anonymised_private_session_takes_its_private_entry_with_it(day, people):
    session = day["private"]
    anonymize_session(session, start_run(session.project, AnonymizationConfig(), dry_run=False))
    assert not DiaryEntry.objects.filter(owner=people.alice, character="cathy").exists()
    due.distill_due()
    rewritten = DiaryEntry.objects.get(owner=people.alice, character="cathy")
    assert rewritten.visibility == Visibility.PRIVATE  # written again for its owner only


def test_distilling_twice_keeps_one_entry_per_audience(day, people):
    before = sorted(DiaryEntry.objects.values_list("character", "owner_id"))
    distill_day(DAY)
    distill_day(DAY)
    assert sorted(DiaryEntry.objects.values_list("character", "owner_id")) == before
    assert len(before) == 3


def test_the_optional_model_reads_only_the_messages_the_entrys_audience_reads(
    project, people, settings
):
    from tests.sessions.enrich.test_summary import Server

    chat(
        project,
        "sam",
        "max",
        [("user", "The customer Acme pays 40k a year.")],
        owner=people.alice,
        visibility=Visibility.SUMMARY,
        summary="Pricing discussed.",
    )
    chat(
        project,
        "sam",
        "cathy",
        [("user", "I am interviewing at another company on Friday.")],
        owner=people.alice,
        visibility=Visibility.PRIVATE,
    )
    with Server("ok") as server:
        settings.SUMMARY_LLM_URL, settings.SUMMARY_LLM_MODEL = server.url, "tiny"
        distill_day(DAY)
    sent = " ".join(str(request["body"]) for request in server.requests)
    assert "Acme" not in sent  # the team's entry: a summary session's messages stay unread
    assert "interviewing" in sent  # alice's private entry reads her own session
    team_max = DiaryEntry.objects.get(character="max")
    assert team_max.method == "offline" and "Pricing discussed." in team_max.happened


def test_a_memory_held_in_another_characters_entry_leaves_it_at_once(project, people):
    review = chat(
        project,
        "sam",
        "rex",
        [("user", "Review the parser.")],
        owner=people.alice,
        visibility=Visibility.TEAM,
    )
    # Said in rex's session, held by cathy: cathy's entry holds it, and does not list it.
    record(project, MemoryDraft("fact", "Sam's pager number is 555", review, agent="cathy"))
    distill_day(DAY)
    cathy = DiaryEntry.objects.get(character="cathy")
    assert "pager" in cathy.text and review.public_id not in cathy.sessions
    session_visibility.change(reader(people.alice), [review], Visibility.PRIVATE)
    assert "pager" not in texts(people, "bob")
    due.distill_due()
    assert "pager" not in texts(people, "bob") and "pager" in texts(people, "alice")
