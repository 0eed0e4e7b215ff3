"""Archiving: what it frees (message vectors) and keeps (everything else), search and context
without archived sessions unless asked, and restoring in full — by POST …/restore, by
opening the session, by a new message — with search by meaning back once re-embedded.
The race with the real embedding worker is at the end."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.db import connection
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from search.service import SearchRequest, search
from sessions.capture.service import append_messages
from sessions.enrich.chunking import chunk_message, header_for
from sessions.forget.archive import archive_check
from sessions.models import EnrichmentStatus, Lifecycle, Message, MessageChunk, Session
from teams.models import ApiToken, Role
from tests.conftest import TEST_OUTPUT, WorkerProcess, purge_test_queue
from tests.factories import MembershipFactory, ProjectFactory
from tests.search.corpus import AUTH, COOKING, DEPLOY, capture, embed_all, project_access
from tests.search.test_api import client_for
from tests.waiting import wait_for
from tests.web.conftest import client_for as browser_for
from transcripts.base import ParsedMessage

MEANING = "how do we check who is signed in?"  # no word in common with AUTH
WORDS = "JWT RS256"


def make_old(session, days=40):
    then = timezone.now() - timedelta(days=days)
    Session.objects.filter(pk=session.pk).update(created_at=then, last_active_at=then)


def found(project, query, **options) -> set[str]:
    result = search(project_access(project), SearchRequest(query, **options))
    return {hit.session.public_id for hit in result.hits}


@pytest.fixture
def corpus(project):
    sessions = {
        "auth": capture(project, AUTH, title="Auth fix"),
        "deploy": capture(project, DEPLOY),
        "cooking": capture(project, COOKING),
    }
    embed_all()
    return sessions


@pytest.mark.django_db
def test_archiving_drops_message_vectors_and_restore_brings_search_by_meaning_back(project, corpus):
    auth = corpus["auth"]
    assert auth.public_id in found(project, MEANING, mode="semantic", limit=1)
    make_old(auth)
    assert archive_check() == {"faded": 0, "archived": 1}
    auth.refresh_from_db()
    assert auth.lifecycle == Lifecycle.ARCHIVED and auth.archived_at is not None
    assert not MessageChunk.objects.filter(session=auth).exists()
    assert MessageChunk.objects.filter(session=corpus["deploy"]).exists()
    # Kept: the messages (keyword-searchable), and a session vector for "similar sessions".
    assert Message.objects.filter(session=auth).count() == len(AUTH)
    assert auth.embedding is not None

    # Left out by default; found by keyword when asked; not by meaning (no vectors).
    assert auth.public_id not in found(project, WORDS)
    assert auth.public_id in found(project, WORDS, include_archived=True)
    assert auth.public_id not in found(project, MEANING, mode="semantic", include_archived=True)
    api = client_for(project)
    listed = api.get("/api/v1/search", {"q": WORDS}).json()["results"]
    assert auth.public_id not in {hit["session"]["id"] for hit in listed}
    listed = api.get("/api/v1/search", {"q": WORDS, "include_archived": "true"}).json()["results"]
    assert auth.public_id in {hit["session"]["id"] for hit in listed}
    context = {"query": WORDS, "min_relevance": 0}
    body = api.post("/api/v1/context", context, format="json").json()
    assert auth.public_id not in {s["session"]["id"] for s in body["sessions"]}
    body = api.post("/api/v1/context", {**context, "include_archived": True}, format="json").json()
    assert auth.public_id in {s["session"]["id"] for s in body["sessions"]}
    # A second check changes nothing.
    assert archive_check() == {"faded": 0, "archived": 0}

    response = api.post(f"/api/v1/sessions/{auth.public_id}/restore")
    assert response.status_code == 200, response.content
    assert response.json()["lifecycle"] == Lifecycle.ACTIVE
    assert set(
        Message.objects.filter(session=auth).values_list("enrichment_status", flat=True)
    ) == {EnrichmentStatus.PENDING}
    embed_all()
    assert auth.public_id in found(project, MEANING, mode="semantic", limit=1)
    again = api.post(f"/api/v1/sessions/{auth.public_id}/restore")
    assert again.status_code == 409
    assert "neither in the trash nor archived (it is active)" in again.json()["detail"]


@pytest.mark.django_db
def test_opening_or_writing_to_an_archived_session_restores_it(team, project, corpus):
    viewer = MembershipFactory(team=team, role=Role.VIEWER).user
    for session in corpus.values():
        make_old(session)
    assert archive_check()["archived"] == 3

    api = client_for(project)
    body = api.get(f"/api/v1/sessions/{corpus['auth'].public_id}").json()
    assert body["lifecycle"] == Lifecycle.ACTIVE  # opened through the API

    page = browser_for(viewer).get(reverse("web:session", args=[corpus["deploy"].public_id]))
    assert page.status_code == 200
    assert "it is restored" in page.content.decode()

    append_messages(corpus["cooking"], [ParsedMessage(role="user", content="and dessert?")])
    for session in corpus.values():
        session.refresh_from_db()
        assert session.lifecycle == Lifecycle.ACTIVE and session.archived_at is None
        pending = Message.objects.filter(session=session, enrichment_status="pending").count()
        assert pending == session.message_count  # none has vectors: all embed again


@pytest.mark.django_db
def test_who_may_restore_what(team, project, outsider, corpus):
    auth = corpus["auth"]
    url = f"/api/v1/sessions/{auth.public_id}/restore"
    viewer = MembershipFactory(team=team, role=Role.VIEWER).user
    member = MembershipFactory(team=team, role=Role.MEMBER).user

    def as_user(user):
        client = APIClient()
        client.force_authenticate(user)
        return client

    make_old(auth)
    archive_check()
    assert as_user(outsider).post(url).status_code == 404
    assert as_user(viewer).post(url).status_code == 403
    assert as_user(member).post(url).status_code == 200
    assert as_user(member).post(url).status_code == 409
    # The trash stays an admin's.
    auth.deleted_at = timezone.now()
    Session.objects.filter(pk=auth.pk).update(deleted_at=auth.deleted_at)
    assert as_user(member).post(url).status_code == 403


def deadlocks() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()")
        return cursor.fetchone()[0]


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_archiving_while_the_worker_embeds_it_leaves_no_vector_and_restore_embeds_once():
    project = ProjectFactory()
    _, raw = ApiToken.issue(project, name="race")
    purge_test_queue()
    worker = WorkerProcess(TEST_OUTPUT / "archive-race-worker.log")
    worker.start()
    try:
        before = deadlocks()
        lines = [f"line {i} of a long log about the release pipeline " * 8 for i in range(600)]
        big = capture(project, [("user", line) for line in lines])
        assert wait_for(lambda: MessageChunk.objects.filter(session=big).exists(), timeout=120)
        assert Message.objects.filter(session=big, enrichment_status="pending").exists()
        make_old(big)
        started = time.monotonic()
        assert archive_check()["archived"] == 1
        assert time.monotonic() - started < 10
        # A session captured after: once it is embedded, the batches claimed before the
        # archive have been written (the queue is taken oldest first).
        canary = capture(project, [("user", "the canary sings")])
        assert wait_for(lambda: MessageChunk.objects.filter(session=canary).exists(), 120)
        assert not MessageChunk.objects.filter(session=big).exists()
        assert not Message.objects.filter(session=big).exclude(enrichment_status="done").exists()

        api = APIClient()
        api.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
        assert api.post(f"/api/v1/sessions/{big.public_id}/restore").status_code == 200
        messages = Message.objects.filter(session=big)
        assert wait_for(lambda: not messages.exclude(enrichment_status="done").exists(), 300)
        expected = sum(
            len(chunk_message(m.content, header=header_for(m.role, ""))) for m in messages
        )
        assert MessageChunk.objects.filter(session=big).count() == expected
        assert deadlocks() == before
    finally:
        worker.stop()
