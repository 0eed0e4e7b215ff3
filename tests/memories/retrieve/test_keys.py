"""Memories as extra keys in message search: a memory matching the query brings up the
message it came from, only when asked, only within the caller's scope and filters."""

from __future__ import annotations

import pytest
from django.test import override_settings

from memories.capture.record import Evidence, MemoryDraft, record
from search.service import SearchRequest, search
from sessions.filters import Filters
from sessions.models import Message
from tests.factories import ProjectFactory
from tests.search.corpus import capture, embed_all, project_access

pytestmark = pytest.mark.django_db

NOISE = [
    ("user", f"Status update {i}: the weekly report about cooking classes is ready.")
    for i in range(12)
]


@pytest.fixture
def evidence(project):
    session = capture(
        project,
        [("user", "I finally booked it: three weeks walking around Lyon and Bordeaux in May!")],
        agent="friend",
    )
    capture(project, NOISE, agent="other")
    embed_all()
    message = Message.objects.get(session=session)
    record(
        project,
        MemoryDraft(
            type="fact",
            content="Caroline plans a vacation to France",
            session=session,
            evidence=[Evidence(message)],
        ),
    )
    return message


def position(project, query, **options):
    hits = search(project_access(project), SearchRequest(query, limit=20, **options)).hits
    ids = [h.message.pk for h in hits]
    return ids


def relevance_of(message, project, query, **options):
    hits = search(project_access(project), SearchRequest(query, limit=20, **options)).hits
    return next(h.relevance for h in hits if h.message.pk == message.pk)


def test_a_memory_brings_its_message_up_only_when_asked(project, evidence):
    query = "Caroline vacation France"
    without = position(project, query, memory_keys=False)
    with_keys = position(project, query, memory_keys=True)
    assert with_keys[0] == evidence.pk
    # The message shares no word with the question; the memory that came from it does.
    lifted = relevance_of(evidence, project, query, memory_keys=True)
    assert lifted > relevance_of(evidence, project, query, memory_keys=False)
    with override_settings(SEARCH_MEMORY_KEYS=True):
        assert position(project, query)[0] == evidence.pk
        assert relevance_of(evidence, project, query) == lifted
    assert position(project, query) == without  # off by default
    assert relevance_of(evidence, project, query) < lifted


def test_keys_stay_within_the_filters_and_the_team(project, evidence):
    query = "Caroline vacation France"
    filtered = position(project, query, memory_keys=True, filters=Filters(agent="other"))
    assert evidence.pk not in filtered
    outsider = ProjectFactory()
    hits = search(project_access(outsider), SearchRequest(query, limit=20, memory_keys=True)).hits
    assert hits == []


def test_the_search_api_takes_memory_keys(project, evidence):
    from teams.models import ApiToken
    from tests.clients import client_for

    agent = client_for(token=ApiToken.issue(project)[1])
    query = {"q": "Caroline vacation France", "limit": 5}
    on = agent.get("/api/v1/search", {**query, "memory_keys": "true"})
    off = agent.get("/api/v1/search", {**query, "memory_keys": "false"})
    assert on.status_code == off.status_code == 200, on.content
    assert on.json()["results"][0]["message"]["seq"] == evidence.seq
    assert on.json()["results"][0]["relevance"] > off.json()["results"][0]["relevance"]
    bad = agent.get("/api/v1/search", {**query, "memory_keys": "maybe"})
    assert bad.status_code == 400 and "memory_keys" in bad.json()
