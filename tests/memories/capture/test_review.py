"""The review queue's rules (``memories/capture/status.py`` and ``review.py``): which
memories are proposed, what accepting, rejecting, reverting and reopening do, rejections
remembered (same words, or nearly the same meaning), and the history of every change."""

from __future__ import annotations

import pytest

from memories.capture import review
from memories.capture.record import (
    Evidence,
    InvalidMemory,
    MemoryConflict,
    MemoryDraft,
    record,
    resolve,
)
from memories.forget import trash
from memories.models import Memory, MemoryStatus, Origin
from memories.retrieve.query import MemoryFilters, apply, visible
from memories.retrieve.search import search_memories
from sessions.models import Message
from teams.access import Access
from tests.factories import MessageFactory, SessionFactory

pytestmark = pytest.mark.django_db

CHART = "The build uses Chart.js for the dashboard graphs"


def extracted(project, content=CHART, confidence="low", kind="fact", **fields):
    session = fields.pop("session", None) or SessionFactory(project=project)
    seq = Message.objects.filter(session=session).count()
    message = MessageFactory(session=session, seq=seq, content=f"Note: {content}.")
    draft = MemoryDraft(
        type=kind,
        content=content,
        session=session,
        confidence=confidence,
        origin=Origin.EXTRACTOR,
        extractor="offline",
        evidence=[Evidence(message, content)],
        **fields,
    )
    return record(project, draft)


def statuses(memory):
    return [(e.from_status, e.to_status) for e in memory.history.order_by("at", "id")]


def test_an_extracted_memory_below_the_threshold_is_proposed_and_one_above_is_active(project):
    assert project.memory_review_threshold == 0.5
    low = extracted(project, "Retries use exponential backoff", confidence="low").memory
    high = extracted(project, "Deploys go out on Tuesdays", confidence="high").memory
    unstated = extracted(project, "The cache lives in Redis", confidence="").memory
    assert (low.status, high.status, unstated.status) == ("proposed", "active", "active")
    [event] = low.history.all()
    assert (event.from_status, event.to_status, event.actor) == ("", "proposed", "extractor")
    assert "below the project's review threshold 0.50" in event.reason
    project.memory_review_threshold = 0.0
    project.save()
    assert extracted(project, "Tests run in parallel", confidence="uncertain").memory.status == (
        "active"
    )


def test_a_memory_recorded_on_purpose_is_active_whatever_its_confidence(project, owner):
    by_person = record(
        project,
        MemoryDraft(
            type="fact",
            content="We pin Node 20",
            confidence="uncertain",
            origin=Origin.PERSON,
            created_by=owner,
        ),
    ).memory
    by_agent = record(
        project, MemoryDraft(type="fact", content="CI uses GitHub Actions", confidence="low")
    ).memory
    assert by_person.status == by_agent.status == MemoryStatus.ACTIVE
    assert by_person.history.get().by == owner


def test_proposed_memories_stay_out_of_lists_search_and_context_unless_asked(project, owner):
    proposed = extracted(project).memory
    access = Access(team_ids=(project.team_id,), project_ids=(project.pk,))
    assert not apply(visible(access), MemoryFilters()).filter(pk=proposed.pk).exists()
    assert apply(visible(access), MemoryFilters(status="proposed")).get() == proposed
    assert search_memories(access, "Chart.js dashboard graphs", MemoryFilters(), 10) == []
    asked = search_memories(
        access, "Chart.js dashboard graphs", MemoryFilters(status="proposed"), 10
    )
    assert [hit.memory.pk for hit in asked] == [proposed.pk]


def test_a_rejection_is_not_proposed_again_in_the_same_or_nearly_the_same_words(project, owner):
    first = extracted(project).memory
    review.reject(first, by=owner, reason="we removed Chart.js")
    count = Memory.objects.count()
    # The same words again (another session: a later one, a re-import).
    again = extracted(project, CHART + ".")
    assert (again.outcome, again.memory.pk) == ("rejected", first.pk)
    # Nearly the same meaning, other words (cosine ≥ 0.90, not the same fingerprint).
    near = extracted(project, "The build uses Chart.js for dashboard graphs.")
    assert (near.outcome, near.memory.pk) == ("rejected", first.pk)
    assert Memory.objects.count() == count
    # Even with a high confidence: a rejection stops what machines read.
    assert extracted(project, CHART, confidence="high").outcome == "rejected"
    # The opposite statement is another statement.
    opposite = extracted(project, "The build does not use Chart.js for the dashboard graphs")
    assert opposite.outcome == "created"
    # Someone recording it on purpose is not stopped.
    mine = record(project, MemoryDraft(type="fact", content=CHART, origin=Origin.PERSON))
    assert mine.outcome == "created" and mine.memory.status == "active"


def test_a_rejection_is_undone_back_into_the_queue(project, owner):
    memory = review.reject(extracted(project).memory, by=owner, reason="noise")
    memory = review.unreject(memory, by=owner)
    assert memory.status == MemoryStatus.PROPOSED
    assert extracted(project, CHART).outcome == "merged"  # into the proposal, not a second one
    with pytest.raises(MemoryConflict, match="not rejected"):
        review.unreject(memory, by=owner)
    assert statuses(memory) == [
        ("", "proposed"),
        ("proposed", "rejected"),
        ("rejected", "proposed"),
    ]


def test_a_proposal_supersedes_nothing_until_it_is_accepted(project, owner):
    kept = record(
        project, MemoryDraft(type="decision", content="Use Chart.js for graphs", topic="charts")
    ).memory
    doubt = extracted(
        project, "Use Plotly for graphs instead", confidence="low", kind="decision", topic="charts"
    ).memory
    kept.refresh_from_db()
    assert (doubt.status, kept.status) == ("proposed", "active")
    review.accept(doubt, by=owner, reason="agreed in standup")
    kept.refresh_from_db()
    doubt.refresh_from_db()
    assert (doubt.status, kept.status) == ("active", "superseded")
    superseded = kept.history.get(to_status="superseded")
    assert superseded.related == doubt and superseded.by == owner
    assert f"superseded by {doubt.public_id}" == superseded.reason
    with pytest.raises(MemoryConflict) as refused:
        review.accept(kept, by=owner)
    assert refused.value.state["superseded_by"] == doubt.public_id
    assert doubt.public_id in str(refused.value)


def test_edit_then_accept_checks_the_content_and_changes_nothing_when_refused(project, owner):
    memory = extracted(project).memory
    for bad in ("   ", "x" * 4001):
        with pytest.raises(InvalidMemory) as refused:
            review.accept(memory, by=owner, content=bad)
        assert refused.value.field == "content"
    memory.refresh_from_db()
    assert (memory.status, memory.content, memory.history.count()) == ("proposed", CHART, 1)
    accepted = review.accept(memory, by=owner, content="The build uses ECharts for graphs")
    assert (accepted.status, accepted.content) == ("active", "The build uses ECharts for graphs")
    assert accepted.history.last().reason == "edited, then accepted"


def test_an_agent_recording_a_proposal_again_accepts_it(project):
    proposal = extracted(project).memory
    again = record(project, MemoryDraft(type="fact", content=CHART, origin=Origin.AGENT))
    assert (again.outcome, again.memory.pk, again.memory.status) == (
        "merged",
        proposal.pk,
        "active",
    )
    assert again.memory.history.last().actor == "agent"


def test_a_decision_is_reverted_with_why_and_a_finding_reopened(project, owner):
    decision = record(project, MemoryDraft(type="decision", content="Ship on Fridays")).memory
    with pytest.raises(InvalidMemory) as refused:
        review.revert(decision, by=owner, reason=" ")
    assert refused.value.field == "reason"
    reverted = review.revert(decision, by=owner, reason="Friday deploys broke prod twice")
    assert reverted.status == MemoryStatus.REVERTED
    with pytest.raises(MemoryConflict):
        review.revert(reverted, by=owner, reason="again")
    event = reverted.history.last()
    assert (event.by, event.reason) == (owner, "Friday deploys broke prod twice")

    finding = record(project, MemoryDraft(type="finding", content="Login leaks tokens")).memory
    resolve(finding, by="sam", action_taken="scrubbed the logs")
    reopened = review.reopen(finding, by=owner, reason="seen again in prod")
    assert reopened.resolution == "open"
    assert statuses(reopened) == [("", "active"), ("open", "resolved"), ("resolved", "open")]
    with pytest.raises(MemoryConflict):
        review.reopen(reopened, by=owner)
    with pytest.raises(InvalidMemory):
        review.reopen(decision, by=owner)


def test_a_deleted_proposal_comes_back_proposed(project, owner):
    memory = extracted(project).memory
    trash.delete(memory, by=owner, reason="tidy")
    with pytest.raises(MemoryConflict):
        review.accept(memory, by=owner)
    restored = trash.restore(memory, by=owner)
    assert restored.status == MemoryStatus.PROPOSED
    assert statuses(restored) == [
        ("", "proposed"),
        ("proposed", "deleted"),
        ("deleted", "proposed"),
    ]
