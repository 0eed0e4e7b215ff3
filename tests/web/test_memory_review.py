"""The review queue page: proposals with their evidence, accepted (as they are or edited) or
rejected, one or many at once; the rejections and their undo; a memory's history and
review buttons; the count in the menu and on the dashboard; another team's memory is a 404
and viewers only read."""

from __future__ import annotations

import pytest
from django.urls import reverse

from memories.capture.record import Evidence, MemoryDraft, record
from memories.models import Memory, MemoryStatus, Origin
from sessions.models import Message

pytestmark = pytest.mark.django_db

QUEUE = "/memories/review"


def propose(session, content: str, seq: int) -> Memory:
    message = Message.objects.get(session=session, seq=seq)
    draft = MemoryDraft(
        type="fact",
        content=content,
        session=session,
        confidence="low",
        origin=Origin.EXTRACTOR,
        evidence=[Evidence(message, message.content[:80])],
    )
    memory = record(session.project, draft).memory
    assert memory.status == MemoryStatus.PROPOSED
    return memory


@pytest.fixture
def proposals(team_session):
    return [
        propose(team_session, "The cache lives in Redis", 0),
        propose(team_session, "Deploys go out on Tuesdays", 1),
        propose(team_session, "Logs rotate daily", 2),
    ]


def test_the_queue_shows_each_proposal_with_its_evidence_and_the_count(
    viewer_client, proposals, team_session
):
    body = viewer_client.get(QUEUE).content.decode()
    for memory in proposals:
        assert memory.content in body
    first = Message.objects.get(session=team_session, seq=0)
    assert first.content[:40] in body  # the quoted sentence
    assert f"{reverse('web:session', args=[team_session.public_id])}?at=0#m-0" in body
    assert "3 waiting" in body
    assert 'name="accept_one"' not in body  # a viewer reads only
    menu = viewer_client.get("/sessions").content.decode()
    assert 'href="/memories/review">Review <span class="pill pill-interrupted"' in menu
    assert 'aria-label="3 waiting"' in menu
    dashboard = viewer_client.get("/").content.decode()
    assert "Memories to review" in dashboard and f'href="{QUEUE}">3</a>' in dashboard
    # Proposals are not in the memories list by default.
    listed = viewer_client.get("/memories").content.decode()
    assert "The cache lives in Redis" not in listed
    assert (
        "The cache lives in Redis"
        in viewer_client.get("/memories?status=proposed").content.decode()
    )


def test_one_is_accepted_edited_and_others_rejected_in_bulk(member_client, proposals, member):
    cache, deploys, logs = proposals
    done = member_client.post(
        QUEUE, {"accept_one": cache.pk, f"content-{cache.pk}": "The cache lives in Valkey"}
    )
    assert done.status_code == 302
    cache.refresh_from_db()
    assert (cache.status, cache.content) == ("active", "The cache lives in Valkey")
    assert cache.history.last().by == member
    bulk = member_client.post(
        QUEUE, {"bulk": "reject", "ids": [deploys.pk, logs.pk], "reason": "stale"}, follow=True
    )
    assert "Rejected 2" in bulk.content.decode()
    states = set(
        Memory.objects.filter(pk__in=[deploys.pk, logs.pk]).values_list("status", flat=True)
    )
    assert states == {"rejected"}
    assert "Nothing waits for review" in member_client.get(QUEUE).content.decode()


def test_an_empty_edit_changes_nothing_and_says_why(member_client, proposals):
    cache, deploys, _ = proposals
    answer = member_client.post(
        QUEUE,
        {"bulk": "accept", "ids": [deploys.pk, cache.pk], f"content-{cache.pk}": "  "},
        follow=True,
    )
    assert "Nothing was changed" in answer.content.decode()
    assert set(
        Memory.objects.filter(pk__in=[cache.pk, deploys.pk]).values_list("status", flat=True)
    ) == {"proposed"}


def test_rejections_are_listed_and_undone(member_client, proposals):
    cache = proposals[0]
    member_client.post(QUEUE, {"reject_one": cache.pk, "reason": "we use Valkey"})
    page = member_client.get("/memories/rejections").content.decode()
    assert "The cache lives in Redis" in page and "we use Valkey" in page
    member_client.post("/memories/rejections", {"id": cache.pk})
    cache.refresh_from_db()
    assert cache.status == "proposed"


def test_the_memory_page_shows_its_history_and_reviews_it(member_client, proposals):
    cache = proposals[0]
    page_url = reverse("web:memory", args=[cache.project_id, cache.public_id])
    page = member_client.get(page_url).content.decode()
    assert "Proposed: waiting for review" in page and 'value="accept"' in page
    status_url = reverse("web:memory-status", args=[cache.project_id, cache.public_id])
    member_client.post(status_url, {"action": "accept", "reason": "checked"})
    refused = member_client.post(status_url, {"action": "revert", "reason": ""}, follow=True)
    assert "Say why it is reverted" in refused.content.decode()
    member_client.post(status_url, {"action": "revert", "reason": "moved to Valkey"})
    page = member_client.get(page_url).content.decode()
    assert "Reverted: withdrawn" in page
    assert "proposed → <strong>active</strong>" in page and "checked" in page
    assert "active → <strong>reverted</strong>" in page and "moved to Valkey" in page


def test_another_teams_proposal_is_a_404(outsider_client, proposals):
    cache = proposals[0]
    assert "The cache lives in Redis" not in outsider_client.get(QUEUE).content.decode()
    assert outsider_client.post(QUEUE, {"accept_one": cache.pk}).status_code == 404
    assert outsider_client.post(QUEUE, {"bulk": "reject", "ids": [cache.pk]}).status_code == 404
    assert outsider_client.post("/memories/rejections", {"id": cache.pk}).status_code == 404
    status_url = reverse("web:memory-status", args=[cache.project_id, cache.public_id])
    assert outsider_client.post(status_url, {"action": "accept"}).status_code == 404
    cache.refresh_from_db()
    assert cache.status == "proposed" and cache.history.count() == 1


def test_a_viewer_cannot_review(viewer_client, proposals):
    cache = proposals[0]
    assert viewer_client.post(QUEUE, {"accept_one": cache.pk}).status_code == 403
    cache.refresh_from_db()
    assert cache.status == "proposed"
