"""Questions whose answer is spread over several sessions, through the API and the
context: every session holding a part shows, and the context stays within its budget."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from search.context import build_context
from sessions.capture.service import capture_session
from tests.search.corpus import AUTH, capture, embed_all, project_access
from tests.search.test_api import client_for
from transcripts.base import ParsedMessage, ParsedSession

pytestmark = pytest.mark.django_db

MAYA_HOBBIES = [
    [
        ("Leo", "How was your weekend, Maya?"),
        ("Maya", "Great! Pottery is my new hobby: I spent Saturday throwing bowls on the wheel."),
    ],
    [
        ("Leo", "You look tired."),
        ("Maya", "Rock climbing at the gym last night, my favourite pastime. My arms are sore."),
    ],
    [
        ("Leo", "Anything fun lately?"),
        ("Maya", "I joined a chess club downtown; we play every Thursday, a hobby I love."),
    ],
]
LEO_HOBBIES = [
    ("Maya", "What do you do for fun, Leo?"),
    ("Leo", "My hobbies are hiking and baking sourdough bread."),
    ("Leo", "Hobbies keep me sane: hiking on Sundays, baking on Saturdays."),
    ("Leo", "I also collect vinyl records, another of my hobbies."),
]
WORK = [("Maya", "The quarterly report is due Friday."), ("Leo", "I'll send the figures.")]


def chat(project, turns, days_ago):
    return capture_session(
        project,
        ParsedSession(
            source_format="api",
            agent_name="chat",
            started_at=timezone.now() - timedelta(days=days_ago),
            messages=[ParsedMessage(role="user", content=t, author=a) for a, t in turns],
        ),
    ).session


@pytest.fixture
def chats(project):
    maya = [chat(project, turns, days_ago=30 - 5 * i) for i, turns in enumerate(MAYA_HOBBIES)]
    chat(project, LEO_HOBBIES, days_ago=2)
    for i in range(3):
        chat(project, WORK, days_ago=10 + i)
    embed_all()
    return maya


def test_an_aggregate_question_finds_each_session_holding_a_part(project, chats):
    # 'Rock climbing ..., my favourite pastime' is embedded after the unrelated 'You look
    # tired.' (sessions/enrich/chunking.py); it reaches the top 10 as a self-statement of
    # the named speaker (search/speakers.py).
    response = client_for(project).get("/api/v1/search", {"q": "What are Maya's hobbies?"})
    assert response.status_code == 200, response.content
    results = response.json()["results"]
    top = {r["session"]["id"] for r in results[:10]}
    assert {s.public_id for s in chats} <= top


@pytest.mark.parametrize("budget", [60, 150, 400, 1000, 4000])
def test_the_context_never_exceeds_its_budget_and_holds_the_answer(project, chats, budget):
    capture(project, AUTH, title="Auth fix")
    embed_all()
    access = project_access(project)
    context = build_context(
        access,
        "how are refresh tokens stored?",
        max_sessions=10,
        min_relevance=0,
        max_tokens=budget,
        touch=False,
    )
    assert context.tokens <= budget
    if budget >= 150:
        assert (
            "Refresh tokens rotate on every use and are stored hashed in Redis." in context.markdown
        )
    aggregate = build_context(
        access,
        "What are Maya's hobbies?",
        max_sessions=10,
        min_relevance=0,
        max_tokens=budget,
        touch=False,
    )
    assert aggregate.tokens <= budget
    if budget >= 400:
        for turns in MAYA_HOBBIES:
            assert turns[1][1] in aggregate.markdown
