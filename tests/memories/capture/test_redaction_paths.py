"""Every path that writes a memory redacts it as its project redacts messages: the API, the
extractor's drafts, YAML import, edits, resolutions, agent states, evidence quotes and
imported diary entries. A project with redaction off keeps what it was sent (the switch
acts)."""

from __future__ import annotations

import numpy as np
import pytest

from memories.capture.edit import edit
from memories.capture.record import Evidence, MemoryDraft, record, resolve, update_agent_state
from memories.diary.archive_section import load_diary
from memories.diary.models import DiaryEntry
from memories.models import Memory, MemoryEvidence, MemoryType
from memories.portable.load import import_files
from sessions.embedding.query import embed_query
from tests.factories import MessageFactory, ProjectFactory, SessionFactory
from tests.memories.conftest import ALL, token_client
from tests.redaction_inputs import EMAIL, REDACTED, SAID, TOKEN

pytestmark = pytest.mark.django_db


@pytest.fixture
def on():
    """A project that redacts secrets and e-mail addresses."""
    return ProjectFactory(redact_emails=True)


@pytest.fixture
def off():
    """A project that redacts nothing: the switch acts."""
    return ProjectFactory(redact_secrets=False, redact_emails=False)


def assert_clean(*values):
    for value in values:
        text = str(value)
        assert TOKEN not in text and EMAIL not in text, text


def test_the_api_stores_and_answers_redacted(on, off):
    body = {
        "type": "decision",
        "content": SAID,
        "rationale": f"the token {TOKEN} works",
        "topic": f"deploy {EMAIL}",
        "tags": [f"key-{TOKEN}"],
        "person": EMAIL,
    }
    response = token_client(on, *ALL).post("/api/v1/memories", body, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["content"] == REDACTED
    assert_clean(response.json())
    memory = Memory.objects.get(project=on)
    assert memory.content == REDACTED
    assert memory.details["rationale"] == "the token [REDACTED:github_token] works"
    assert_clean(memory.topic, memory.tags, memory.person, memory.details)
    # The vector is the redacted text's, never the raw one's.
    assert np.allclose(memory.embedding, embed_query(REDACTED), atol=1e-5)

    kept = token_client(off, *ALL).post("/api/v1/memories", body, format="json")
    assert kept.status_code == 201 and kept.json()["content"] == SAID
    assert Memory.objects.get(project=off).person == EMAIL


def test_a_draft_with_its_own_vector_is_embedded_again_when_redacted(on, off):
    """The extractor hands drafts with vectors of their content; a redacted content gets
    the vector of its redacted text."""
    session = SessionFactory(project=on)
    message = MessageFactory(session=session, seq=0, content="the deploy notes")
    raw = embed_query(SAID)
    draft = MemoryDraft(
        type=MemoryType.FACT,
        content=SAID,
        session=session,
        embedding=raw,
        extractor="offline",
        evidence=[Evidence(message, quote=SAID)],
    )
    memory = record(on, draft).memory
    assert memory.content == REDACTED
    assert np.allclose(memory.embedding, embed_query(REDACTED), atol=1e-5)
    assert not np.allclose(memory.embedding, raw, atol=1e-3)
    assert MemoryEvidence.objects.get(memory=memory).quote == REDACTED

    kept = record(off, MemoryDraft(type=MemoryType.FACT, content=SAID, embedding=raw)).memory
    assert kept.content == SAID and np.allclose(kept.embedding, raw, atol=1e-5)


def test_a_restatement_merges_into_the_redacted_memory(on):
    first = record(on, MemoryDraft(type=MemoryType.FACT, content=SAID)).memory
    again = record(on, MemoryDraft(type=MemoryType.FACT, content=SAID, tags=[EMAIL]))
    assert again.outcome == "merged" and again.memory.pk == first.pk
    assert again.memory.tags == ["[redacted:email]"]  # tags are lower-cased


def test_an_edit_is_redacted_and_embedded_from_the_redacted_text(on, off):
    memory = record(on, MemoryDraft(type=MemoryType.FACT, content="plain")).memory
    edited = edit(memory, content=SAID, topic=EMAIL, details={"note": TOKEN})
    assert edited.content == REDACTED and edited.topic == "[REDACTED:email]"
    assert edited.details["note"] == "[REDACTED:github_token]"
    assert np.allclose(edited.embedding, embed_query(REDACTED), atol=1e-5)

    memory = record(off, MemoryDraft(type=MemoryType.FACT, content="plain")).memory
    assert edit(memory, content=SAID).content == SAID


def test_an_edit_through_the_api(on):
    memory = record(on, MemoryDraft(type=MemoryType.DECISION, content="plain")).memory
    response = token_client(on, *ALL).patch(
        f"/api/v1/memories/{memory.public_id}", {"content": SAID}, format="json"
    )
    assert response.status_code == 200, response.content
    assert response.json()["content"] == REDACTED


def test_a_resolution_is_redacted(on):
    finding = record(on, MemoryDraft(type=MemoryType.FINDING, content="no MFA")).memory
    resolved = resolve(finding, by=EMAIL, action_taken=f"rotated {TOKEN}")
    assert resolved.details["resolution"]["action_taken"] == "rotated [REDACTED:github_token]"
    assert_clean(resolved.details)


def test_agent_states_are_redacted(on, off):
    state = {"current_context": {"current_task": SAID}, "working_memory": {"key": TOKEN}}
    created = update_agent_state(on, agent="dev", session=None, state=state).memory
    assert_clean(created.content, created.details)
    assert "Deploy with [REDACTED:github_token]" in created.content
    merged = update_agent_state(on, agent="dev", session=None, state={"session_learnings": [SAID]})
    assert merged.outcome == "merged"
    assert_clean(merged.memory.content, merged.memory.details)
    assert np.allclose(merged.memory.embedding, embed_query(merged.memory.content), atol=1e-5)

    response = token_client(on, *ALL).put(
        "/api/v1/agent-states/dev", {"working_memory": {"next": SAID}}, format="json"
    )
    assert response.status_code == 200, response.content
    assert_clean(response.json())

    kept = update_agent_state(off, agent="dev", session=None, state=state).memory
    assert TOKEN in kept.content and kept.details["working_memory"]["key"] == TOKEN


YAML = f"""
decisions:
  - id: "DEC-001"
    decision: "{SAID}"
    rationale: "ask {EMAIL}"
    tags: ["{TOKEN}"]
"""


def test_yaml_import_is_redacted_and_idempotent(on, off):
    imported = import_files(on, {"decisions.yaml": YAML.encode()})
    assert len(imported.created) == 1
    memory = Memory.objects.get(project=on)
    assert memory.content == REDACTED
    assert_clean(memory.details, memory.tags)
    again = import_files(on, {"decisions.yaml": YAML.encode()})
    assert again.unchanged == ["DEC-001"] and Memory.objects.filter(project=on).count() == 1

    import_files(off, {"decisions.yaml": YAML.encode()})
    assert Memory.objects.get(project=off).content == SAID


def test_imported_diary_entries_are_redacted(on, off):
    entry = {
        "day": "2026-01-11",
        "person": "Ana",
        "character": "dev",
        "happened": SAID,
        "text": SAID,
        "facts": [SAID],
    }
    load_diary(on, [entry], {})
    stored = DiaryEntry.objects.get(project=on)
    assert stored.text == REDACTED and stored.facts == [REDACTED]
    load_diary(off, [entry], {})
    assert DiaryEntry.objects.get(project=off).text == SAID
