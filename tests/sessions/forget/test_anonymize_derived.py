"""Anonymising a session reaches what was derived from it (sessions/derived.py):
its memories (text, fields, vector), the evidence quotes, the speaker aliases its people
were called by, and the diary entries that list it. A preview counts them and writes
nothing."""

from __future__ import annotations

import numpy as np
import pytest
from django.utils import timezone

from memories.capture import review
from memories.capture.record import Evidence, MemoryDraft, record
from memories.diary.distill import distill_day
from memories.diary.models import DiaryDue, DiaryEntry
from memories.models import MemoryEvidence
from sessions.forget.anonymize import AnonymizationConfig, anonymize_session, start_run
from sessions.models import Message, SpeakerAlias
from tests.factories import ProjectFactory
from tests.sessions.enrich.test_aliases import TWO_FRIENDS, chat

pytestmark = pytest.mark.django_db

NAMES = ("katherine", "Kate", "rsmith", "Rob")


def run(session, *, write):
    return anonymize_session(
        session, start_run(session.project, AnonymizationConfig(), dry_run=not write)
    )


@pytest.fixture
def friends():
    """Kate (katherine.s) and Rob (rsmith) call each other by name; a memory quotes Kate's
    words, names both, and today's diary lists the session."""
    project = ProjectFactory()
    session = chat(project, TWO_FRIENDS, user="katherine.s")
    said = Message.objects.get(session=session, seq=4)
    memory = record(
        project,
        MemoryDraft(
            "fact",
            "Kate (katherine.s) meets Rob on Saturday",
            session,
            person="katherine.s",
            details={"subject": "katherine.s", "with": "rsmith"},
            tags=["kate", "saturday"],
            topic="Kate and Rob",
            evidence=[Evidence(said, quote="Yes, see you there, Rob!")],
        ),
    ).memory
    distill_day(timezone.now().date(), team_id=project.team_id)
    assert DiaryEntry.objects.filter(sessions__contains=[session.public_id]).exists()
    assert SpeakerAlias.objects.filter(project=project, alias_key="kate").exists()
    return session, memory


def names_in(*texts) -> list[str]:
    joined = " ".join(str(text) for text in texts).casefold()
    return [name for name in NAMES if name.casefold() in joined]


def test_the_preview_counts_each_derived_kind_and_changes_nothing(friends):
    session, memory = friends
    before = (memory.content, list(memory.embedding))
    outcome = run(session, write=False).as_dict()
    changed = outcome["derived_changed"]
    assert changed["memories"] == 1
    assert changed["evidence_quotes"] == 1
    assert changed["diary_entries"] >= 1
    assert changed["aliases"] >= 1
    memory.refresh_from_db()
    assert (memory.content, list(memory.embedding)) == before
    assert DiaryEntry.objects.filter(sessions__contains=[session.public_id]).exists()
    assert SpeakerAlias.objects.filter(project=session.project, alias_key="kate").exists()


def test_applying_rewrites_memories_quotes_aliases_and_diaries(friends):
    session, memory = friends
    review.reject(memory, by="rsmith", reason="Kate says Rob cancelled")
    old_vector = np.array(memory.embedding)
    old_fingerprint = memory.fingerprint
    run(session, write=True)

    memory.refresh_from_db()
    assert not names_in(memory.content, memory.person, memory.details, memory.tags, memory.topic)
    assert memory.content.startswith("User-")
    assert memory.fingerprint != old_fingerprint
    # The vector is made again from the anonymised text, not kept from the original.
    assert not np.allclose(np.array(memory.embedding), old_vector)
    quote = MemoryEvidence.objects.get(memory=memory).quote
    assert quote and not names_in(quote)
    # Its history's reasons and actors too.
    rejected = memory.history.get(to_status="rejected")
    assert rejected.reason and not names_in(rejected.reason, rejected.actor)

    aliases = SpeakerAlias.objects.filter(project=session.project)
    assert not names_in(*aliases.values_list("alias", "alias_key", "speaker"))
    session.refresh_from_db()
    assert not names_in(session.metadata.get("speaker_aliases", ""))

    assert not DiaryEntry.objects.filter(sessions__contains=[session.public_id]).exists()
    assert DiaryDue.objects.filter(team=session.team, day=timezone.now().date()).exists()


def test_a_memory_of_no_session_with_evidence_in_this_one_is_rewritten_too(friends):
    session, _ = friends
    recorded = record(
        session.project,
        MemoryDraft(
            "fact",
            "Rob is busy on Saturday",
            None,
            agent="planner",
            evidence=[Evidence(Message.objects.get(session=session, seq=1))],
        ),
    ).memory
    run(session, write=True)
    recorded.refresh_from_db()
    assert not names_in(recorded.content)
    assert recorded.agent == "planner"
