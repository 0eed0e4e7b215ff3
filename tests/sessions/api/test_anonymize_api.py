"""Anonymisation over the API, and with the real embedding worker."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone
from rest_framework.test import APIClient

from sessions.capture.service import capture_session
from sessions.forget.anonymize import AnonymizationConfig, anonymize_session, start_run
from sessions.models import Message, MessageChunk, Pseudonym, Session
from sessions.tasks import poke_enrichment, sweep
from teams.models import ApiToken, Role
from tests.clients import client_for
from tests.factories import MembershipFactory, MessageFactory, ProjectFactory, SessionFactory
from tests.waiting import wait_for
from transcripts.base import ParsedMessage, ParsedSession


@pytest.fixture
def named(project):
    session = SessionFactory(project=project, user_name="Roberta Quist")
    MessageFactory(session=session, seq=0, content="Roberta Quist asked about roberta@quist.io")
    return session


def url(session):
    return f"/api/v1/sessions/{session.public_id}/anonymize"


@pytest.mark.django_db
def test_preview_by_default_then_apply(team, named):
    admin = MembershipFactory(team=team, role=Role.ADMIN).user
    client = client_for(admin)
    preview = client.post(url(named), {}, format="json")
    assert preview.status_code == 200, preview.content
    body = preview.json()
    assert body["dry_run"] is True and body["messages_changed"] == 1
    assert body["mapping"] == {"User-1": ["Roberta Quist"], "[EMAIL-1]": ["roberta@quist.io"]}
    assert body["replacements"]["email"] == 1
    assert Message.objects.get(session=named).content.startswith("Roberta")

    applied = client.post(url(named), {"dry_run": False, "remove_emails": False}, format="json")
    assert applied.status_code == 200 and applied.json()["dry_run"] is False
    assert Message.objects.get(session=named).content == "User-1 asked about roberta@quist.io"


@pytest.mark.django_db
def test_members_and_agents_may_not_and_outsiders_do_not_see_it(team, teammate, outsider, named):
    assert client_for(teammate).post(url(named), {}, format="json").status_code == 403
    assert client_for(outsider).post(url(named), {}, format="json").status_code == 404
    _, raw = ApiToken.issue(named.project, name="agent")
    agent = APIClient(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert agent.post(url(named), {}, format="json").status_code == 403
    project = f"{team.slug}/{named.project.slug}"
    response = client_for(outsider).post(f"/api/v1/anonymize?project={project}", {}, format="json")
    assert response.status_code == 404
    assert Message.objects.get(session=named).content.startswith("Roberta")


@pytest.mark.django_db
def test_bad_input_is_a_clear_error(team, named):
    admin = MembershipFactory(team=team, role=Role.ADMIN).user
    response = client_for(admin).post(url(named), {"dry_run": "perhaps"}, format="json")
    assert response.status_code == 400
    assert response.json()["dry_run"] == ["Must be true or false (JSON), not 'perhaps'."]
    assert not Pseudonym.objects.exists()


@pytest.mark.django_db
def test_project_preview(team, project, named):
    SessionFactory(project=project, user_name="Roberta Quist", title="Roberta's second")
    admin = MembershipFactory(team=team, role=Role.ADMIN).user
    response = client_for(admin).post(
        f"/api/v1/anonymize?project={team.slug}/{project.slug}", {}, format="json"
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["sessions"] == body["sessions_in_scope"] == 2
    assert body["mapping"]["User-1"] == ["Roberta"] or "Roberta Quist" in body["mapping"]["User-1"]
    assert not Pseudonym.objects.exists()


# --- with the real worker ------------------------------------------------------------------

WORDS = "the checkout flow retries the payment after a timeout and logs the gateway answer "


def capture(project, messages):
    parsed = ParsedSession(
        agent_name="race",
        source_format="api",
        messages=[ParsedMessage(role="user", content=text) for text in messages],
    )
    return capture_session(project, parsed).session


def search_ids(client, query):
    response = client.get("/api/v1/search", {"q": query, "mode": "keyword", "limit": 50})
    assert response.status_code == 200, response.content
    return {hit["session"]["id"] for hit in response.json()["results"]}


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_job_anonymises_a_project_and_search_follows(celery_worker_process):
    project = ProjectFactory(name="Zanzibar Shop", slug="zanzibar-shop")
    admin = MembershipFactory(team=project.team, role=Role.ADMIN).user
    sessions = [
        capture(project, [f"Quentin Zyx said {WORDS}", f"Zanzibar Shop {WORDS}"]) for _ in range(3)
    ]
    Session.objects.filter(pk=sessions[0].pk).update(user_name="Quentin Zyx")
    done = Message.objects.filter(session__project=project, enrichment_status="done")
    assert wait_for(lambda: done.count() == 6, timeout=180)
    client = client_for(admin)
    assert search_ids(client, "Quentin")  # found before

    response = client.post(
        f"/api/v1/anonymize?project={project.team.slug}/{project.slug}",
        {"dry_run": False},
        format="json",
    )
    assert response.status_code == 202, response.content
    job = response.json()["job"]

    polled = []

    def finished():
        polled.append(client.get(f"/api/v1/anonymize/{job}").json())
        return polled[-1]["state"] in ("done", "failed")

    assert wait_for(finished, timeout=120), polled[-1]
    state = polled[-1]
    assert state["state"] == "done", state
    assert state["done"] == state["total"] == 3
    # In messages, the person of the first session, and the summaries written from them.
    assert state["result"]["replacements"]["user"] >= 3 + 1
    assert state["result"]["replacements"]["project"] >= 3
    # Another team's admin cannot read the job.
    outsider = MembershipFactory(role=Role.ADMIN).user
    assert client_for(outsider).get(f"/api/v1/anonymize/{job}").status_code == 404
    assert client_for(admin).get("/api/v1/anonymize/no-such-job").status_code == 404

    # The worker re-embeds the changed messages and the summaries' vectors.
    messages = Message.objects.filter(session__project=project)
    assert wait_for(lambda: not messages.exclude(enrichment_status="done").exists(), 180)
    # The sessions wait to be quiet before enrichment; the beat sweeper then pokes.
    Session.objects.filter(project=project).update(updated_at=timezone.now() - timedelta(hours=1))
    sweep.delay()
    assert wait_for(
        lambda: (
            not Session.objects.filter(project=project, embedding__isnull=True)
            .exclude(summary="")
            .exists()
        ),
        180,
    )
    chunks = MessageChunk.objects.filter(session__project=project)
    assert chunks.count() == 6
    assert not chunks.filter(text__icontains="quentin").exists()
    assert not chunks.filter(text__icontains="zanzibar").exists()
    # In each message's own span (the reply after one holds it as its context too).
    spans = [c.text[len(c.text) - (c.char_end - c.char_start) :] for c in chunks]
    assert sum("User-1" in span for span in spans) == 3
    assert search_ids(client, "Quentin") == set()
    assert search_ids(client, '"User-1"') == {s.public_id for s in sessions}


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_anonymising_while_the_worker_embeds_leaves_no_stale_chunk(celery_worker_process):
    project = ProjectFactory()
    MembershipFactory(team=project.team, role=Role.ADMIN)
    texts = [f"Xavera Plumtree line {i}: {WORDS * 6}" for i in range(600)]
    session = capture(project, texts)
    session.refresh_from_db()
    # Wait until the worker is in the middle of the session.
    assert wait_for(lambda: MessageChunk.objects.filter(session=session).exists(), timeout=120)
    assert Message.objects.filter(session=session, enrichment_status="pending").exists()

    errors = []

    def run():
        try:
            Session.objects.filter(pk=session.pk).update(user_name="Xavera Plumtree")
            anonymize_session(
                Session.objects.select_related("project__team").get(pk=session.pk),
                start_run(project, AnonymizationConfig(), dry_run=False),
            )
        except Exception as exc:  # reported below
            errors.append(exc)
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(60)
    assert not thread.is_alive() and not errors, errors
    poke_enrichment()
    messages = Message.objects.filter(session=session)
    assert wait_for(lambda: not messages.exclude(enrichment_status="done").exists(), 300)
    chunks = MessageChunk.objects.filter(session=session)
    assert not chunks.filter(text__icontains="plumtree").exists()
    assert set(chunks.values_list("message_id", flat=True)) == set(
        messages.values_list("id", flat=True)
    )
    assert not messages.filter(content__icontains="Plumtree").exists()
