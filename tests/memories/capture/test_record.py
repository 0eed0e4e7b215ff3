"""Recording memories: numbering, merging a restatement, superseding a contradiction,
relationships and their cycles, resolving, agent state. Real PostgreSQL, the real model."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection

from memories.capture.record import (
    Evidence,
    InvalidMemory,
    MemoryConflict,
    MemoryDraft,
    link,
    record,
    resolve,
    update_agent_state,
)
from memories.forget.trash import delete as delete_memory
from memories.models import LinkKind, Memory, MemoryLink, MemoryStatus, MemoryType
from tests.factories import MessageFactory, ProjectFactory, SessionFactory

pytestmark = pytest.mark.django_db


def draft(kind=MemoryType.DECISION, content="Use OAuth 2.0 with JWT tokens", **fields):
    return MemoryDraft(type=kind, content=content, **fields)


def test_ids_are_numbered_per_project_and_type():
    project, other = ProjectFactory(), ProjectFactory()
    a = record(project, draft(content="Use PostgreSQL for storage")).memory
    b = record(project, draft(content="Deploy with docker compose")).memory
    f = record(project, draft(MemoryType.FINDING, "No MFA requirement specified")).memory
    o = record(other, draft(content="Use PostgreSQL for storage")).memory
    assert [a.public_id, b.public_id, f.public_id, o.public_id] == [
        "DEC-001",
        "DEC-002",
        "FIND-001",
        "DEC-001",
    ]
    assert f.resolution == "open"


def test_a_restatement_merges_with_its_evidence():
    session = SessionFactory()
    first, second = (MessageFactory(session=session, seq=i) for i in range(2))
    original = record(
        session.project,
        draft(
            content="We will use OAuth 2.0 with JWT tokens.",
            session=session,
            evidence=[Evidence(first)],
            tags=["auth"],
        ),
    )
    again = record(
        session.project,
        draft(
            content="we will use oauth 2.0 with JWT tokens",
            session=session,
            evidence=[Evidence(second)],
            tags=["security"],
        ),
    )
    assert again.outcome == "merged" and again.memory.pk == original.memory.pk
    memory = Memory.objects.get(pk=original.memory.pk)
    assert memory.access_count == 1
    assert sorted(memory.tags) == ["auth", "security"]
    assert sorted(memory.evidence.values_list("message__seq", flat=True)) == [0, 1]
    assert Memory.objects.count() == 1


def test_a_paraphrase_merges_but_its_negation_supersedes():
    project = ProjectFactory()
    base = record(project, draft(MemoryType.PREFERENCE, "The user prefers tabs for indentation"))
    same = record(project, draft(MemoryType.PREFERENCE, "User prefers tabs for indentation."))
    assert same.outcome == "merged"
    changed = record(
        project, draft(MemoryType.PREFERENCE, "The user no longer wants tabs for indentation")
    )
    assert changed.outcome == "created"
    assert [m.pk for m in changed.superseded] == [base.memory.pk]
    base.memory.refresh_from_db()
    assert base.memory.status == MemoryStatus.SUPERSEDED
    assert MemoryLink.objects.filter(
        source=changed.memory, target=base.memory, kind=LinkKind.SUPERSEDES
    ).exists()


def test_same_topic_supersedes():
    project = ProjectFactory()
    old = record(
        project,
        draft(MemoryType.PREFERENCE, "Sessions time out after 30 minutes", topic="session_timeout"),
    ).memory
    new = record(
        project,
        draft(MemoryType.PREFERENCE, "Sessions time out after 2 hours", topic="session_timeout"),
    )
    assert new.superseded == [old]


def test_a_supersedes_cycle_is_refused_and_nothing_is_written():
    project = ProjectFactory()
    a = record(project, draft(content="Use Redis as the broker")).memory
    b = record(project, draft(MemoryType.FINDING, "RabbitMQ is not installed")).memory
    link(a, b, LinkKind.SUPERSEDES)
    with pytest.raises(MemoryConflict):
        link(b, a, LinkKind.SUPERSEDES)
    assert MemoryLink.objects.count() == 1
    with pytest.raises(InvalidMemory):
        link(a, a, LinkKind.RELATES_TO)


def test_bad_drafts_name_their_field():
    project = ProjectFactory()
    with pytest.raises(InvalidMemory) as e:
        record(project, draft(kind="opinion"))
    assert e.value.field == "type"
    with pytest.raises(InvalidMemory) as e:
        record(project, draft(content="x" * 1_000_000))
    assert e.value.field == "content"
    trashed = SessionFactory(project=project)
    trashed.deleted_at = trashed.started_at
    with pytest.raises(InvalidMemory) as e:
        record(project, draft(session=trashed))
    assert e.value.field == "session"
    assert not Memory.objects.exists()


def test_resolving_a_finding_lowers_its_floor():
    project = ProjectFactory()
    finding = record(
        project, draft(MemoryType.FINDING, "Session timeout not defined", severity="critical")
    ).memory
    fix = record(project, draft(content="Sessions time out after 30 minutes")).memory
    resolve(finding, by="user", action_taken="Defined it", resolved_by=fix)
    finding.refresh_from_db()
    assert finding.resolution == "resolved"
    assert finding.details["resolution"]["status"] == "resolved"
    assert MemoryLink.objects.filter(source=fix, target=finding, kind="resolves").exists()
    with pytest.raises(MemoryConflict):
        resolve(finding, by="user")


def test_agent_state_is_one_per_agent_and_updated_in_place():
    session = SessionFactory()
    first = update_agent_state(
        session.project,
        agent="veritas",
        session=session,
        state={"current_context": {"current_task": "verify"}},
    )
    second = update_agent_state(
        session.project,
        agent="veritas",
        session=session,
        state={"session_learnings": ["MFA is often missed"]},
    )
    assert first.memory.pk == second.memory.pk
    memory = Memory.objects.get(pk=first.memory.pk)
    assert memory.details["current_context"]["current_task"] == "verify"
    assert "MFA is often missed" in memory.content


@pytest.mark.django_db(transaction=True)
def test_concurrent_writers_get_distinct_ids():
    project = ProjectFactory()

    def write(i):
        try:
            return record(
                project, draft(content=f"Decision number {i} about topic {i * 7}", reconcile=False)
            ).memory.public_id
        finally:
            connection.close()

    with ThreadPoolExecutor(8) as pool:
        ids = list(pool.map(write, range(24)))
    assert len(set(ids)) == 24


@pytest.mark.django_db(transaction=True)
def test_two_resolves_at_once_resolve_once():
    project = ProjectFactory()
    finding = record(project, draft(MemoryType.FINDING, "Session timeout not defined")).memory
    barrier = threading.Barrier(2)

    def attempt(who):
        try:
            barrier.wait()
            resolve(Memory.objects.get(pk=finding.pk), by=who)
            return "resolved"
        except MemoryConflict:
            return "conflict"
        finally:
            connection.close()

    with ThreadPoolExecutor(2) as pool:
        outcomes = sorted(pool.map(attempt, ["ana", "bo"]))
    assert outcomes == ["conflict", "resolved"]
    finding.refresh_from_db()
    assert finding.details["resolution"]["resolved_by"] in ("ana", "bo")


def test_a_deleted_finding_is_not_resolved():
    project = ProjectFactory()
    finding = record(project, draft(MemoryType.FINDING, "Session timeout not defined")).memory
    delete_memory(finding, reason="duplicate")
    with pytest.raises(MemoryConflict, match="deleted"):
        resolve(finding, by="user")
