"""Memories a transcript already states: an imported conversation.md's "Memory Stored:"
lists and "Memory-Refs:" become memories (origin import, the turn as evidence, the ref kept
as the id) when the session is extracted. Real PostgreSQL, the real embedding model."""

from __future__ import annotations

import pytest

from memories.capture.record import MemoryDraft, record
from memories.enrich.run import extract_session
from memories.enrich.stated import stated_item
from memories.models import Memory, MemoryExtraction, MemoryType, Origin
from sessions.capture.service import capture_session
from sessions.models import Session
from tests.factories import MessageFactory, ProjectFactory, SessionFactory
from tests.transcripts.helpers import fixture
from transcripts.formats.conversation_md import parse_conversation_md

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        (
            "Decision to use multi-agent review [DEC-001]",
            {"type": "decision", "ref": "DEC-001", "text": "Decision to use multi-agent review"},
        ),
        (
            "Finding: Missing MFA requirement [FIND-001]",
            {"type": "finding", "ref": "FIND-001", "text": "Missing MFA requirement"},
        ),
        (
            "Preference: tabs, not spaces",
            {"type": "preference", "ref": "", "text": "tabs, not spaces"},
        ),
        (
            {"type": "learning", "ref": "LEARN-004", "text": "Check MFA in every auth section"},
            {"type": "learning", "ref": "LEARN-004", "text": "Check MFA in every auth section"},
        ),
        ("Agent state: reviewing auth [STATE-001]", None),  # a structure, from files only
        ("Something happened", None),  # no ref, no label: its type cannot be told
        ("Finding: [FIND-009]", None),  # nothing stated
        (42, None),
    ],
)
def test_stored_items_are_read(item, expected):
    assert stated_item(item) == expected


def extract(session: Session) -> None:
    Session.objects.filter(pk=session.pk).update(
        enriched_through_seq=session.messages.order_by("-seq").values_list("seq", flat=True)[0]
    )
    extraction, _ = MemoryExtraction.objects.get_or_create(
        session=session, defaults={"team_id": session.team_id}
    )
    extraction.refresh_from_db()
    extract_session(extraction)


def test_an_imported_conversation_md_keeps_its_memories():
    project = ProjectFactory()
    [parsed] = parse_conversation_md(fixture("conversation.md"))
    session = capture_session(project, parsed).session
    extract(session)

    memories = {m.public_id: m for m in Memory.objects.filter(project=project)}
    assert {k: (m.type, m.content) for k, m in memories.items()} == {
        "DEC-001": (MemoryType.DECISION, "Decision to use multi-agent review"),
        "FIND-001": (MemoryType.FINDING, "Missing MFA requirement"),
        "FIND-002": (MemoryType.FINDING, "Missing session timeout"),
        "PREF-001": (MemoryType.PREFERENCE, "MFA policy clarification"),
    }
    assert all(m.origin == Origin.IMPORT and m.session_id == session.pk for m in memories.values())
    finding = memories["FIND-001"]
    assert (finding.agent, finding.severity, finding.resolution) == ("veritas", "critical", "open")
    [evidence] = finding.evidence.all()
    assert evidence.message.client_id == "turn-3"
    assert evidence.quote == "1. **CRITICAL:** No MFA requirement specified [FIND-001]"
    assert memories["FIND-002"].severity == "important"
    assert memories["PREF-001"].agent == ""  # the user said it
    assert memories["DEC-001"].occurred_at.isoformat() == "2026-01-11T14:30:05+00:00"
    # the kept ids count: the next decision of the project is DEC-002
    assert record(
        project, MemoryDraft(type="decision", content="Ship on Fridays")
    ).memory.public_id == ("DEC-002")


def test_a_taken_ref_gets_a_new_id_and_later_refs_add_evidence():
    project = ProjectFactory()
    record(project, MemoryDraft(type="decision", content="Deploy with docker compose"))  # DEC-001
    session = SessionFactory(project=project, team=project.team)
    stored = MessageFactory(
        session=session,
        seq=0,
        role="assistant",
        author="architect",
        content="We go with Redis for the cache.",
        metadata={"memory_stored": ["Decision: use Redis for caching [DEC-001]"]},
    )
    extract(session)
    decision = Memory.objects.get(project=project, content="use Redis for caching")
    assert decision.public_id == "DEC-002"
    assert decision.origin == Origin.IMPORT

    # a later turn (a later extraction run) refers to it by the ref it was stored under in
    # this session: the id it was renumbered to
    later = MessageFactory(
        session=session,
        seq=1,
        content="As decided [DEC-002], Redis it is.",
        metadata={"memory_refs": ["DEC-002"]},
    )
    extract(session)
    decision.refresh_from_db()
    assert Memory.objects.filter(project=project).count() == 2
    assert decision.access_count == 1
    assert sorted(decision.evidence.values_list("message_id", flat=True)) == [stored.pk, later.pk]


def test_a_ref_of_another_type_is_not_kept_as_the_id():
    session = SessionFactory()
    MessageFactory(
        session=session,
        seq=0,
        metadata={"memory_stored": [{"type": "decision", "ref": "FIND-003", "text": "Use Redis"}]},
    )
    extract(session)
    assert Memory.objects.get(session=session).public_id == "DEC-001"


def test_a_bmad_folders_memory_files_become_its_memories_once():
    from tests.transcripts.test_bmad_session import archive, folder
    from transcripts import parse

    project = ProjectFactory()
    [parsed] = parse(archive(folder()))
    session = capture_session(project, parsed).session
    extract(session)

    memories = {m.public_id: m for m in Memory.objects.filter(project=project)}
    # the file's DEC-001 (in full) instead of the transcript's one-line note of it
    assert memories["DEC-001"].content == "Use multi-agent review for authentication requirements"
    assert memories["DEC-001"].agent == "bmad-master"
    assert [e.message.client_id for e in memories["DEC-001"].evidence.all()] == ["turn-2"]
    assert memories["DEC-001"].access_count == 0
    assert memories["STATE-001"].details["session_learnings"] == ["Check MFA"]
    # the transcript's other notes still count
    assert {"FIND-001", "FIND-002", "PREF-001"} <= memories.keys()
    assert not Memory.objects.filter(project=project, public_id="DEC-002").exists()

    # a later run (new messages) does not read the files again
    MessageFactory(session=session, seq=99, content="more")
    extract(session)
    assert Memory.objects.filter(project=project).count() == len(memories)
