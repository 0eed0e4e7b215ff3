"""A question about what someone asked for is answered by what a person said
(search/asked_for.py): the user's request outranks the assistant's account of the work that
followed, through the API; and the lift's contract."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from search import asked_for
from search.query_intent import QueryIntent, intent_of
from search.ranking import Candidate
from tests.search.corpus import capture, embed_all
from tests.search.test_api import client_for

QUESTION = "What did we ask the agent to add to the reports page?"
REQUEST = "Could people download the numbers from the reports page? A button would do."
ACCOUNT = (
    "As you asked, the agent added a button to the reports page: it adds a CSV export of the "
    "reports page figures, and the tests pass."
)
WORK = [
    ("user", REQUEST),
    ("assistant", ACCOUNT),
]


def order(client) -> list[str]:
    response = client.get("/api/v1/search", {"q": QUESTION, "limit": 10})
    assert response.status_code == 200, response.content
    results = response.json()["results"]
    relevances = [r["relevance"] for r in results]
    assert relevances == sorted(relevances, reverse=True)
    return [WORK[r["message"]["seq"]][1] for r in results]  # a seq is the place in the session


@pytest.mark.django_db
def test_the_users_request_outranks_the_assistants_account_of_the_work(project, monkeypatch):
    capture(project, WORK, title="Reports")
    embed_all()
    client = client_for(project)
    assert order(client)[0] == REQUEST
    # Without the lift the account, which holds more of the question's words, comes first.
    monkeypatch.setattr(asked_for, "LIFT", 0.0)
    assert order(client)[0] == ACCOUNT


@pytest.mark.parametrize(
    "query",
    [
        "what was the agent asked to do in the wallet repo?",
        "What did we ask the agent to add to the reports page?",
        "what did uzaxirr want from Claude?",
        "what did omar call about?",
        "what were the requirements when we asked for the chart to be rewritten?",
        "what did the reviewer request?",
    ],
)
def test_a_question_about_what_someone_asked_for(query):
    assert intent_of(query).asks_for_request


@pytest.mark.parametrize(
    "query",
    [
        "how did codex check whether the telemetry question had been asked before?",
        "how do we retry a failed HTTP request?",
        "which celery task embeds the messages",
        "I want to know how we fixed the login bug",
        "why did the migration fail?",
        "",
    ],
)
def test_a_question_that_does_not_ask_what_someone_asked_for(query):
    assert not intent_of(query).asks_for_request


roles = st.sampled_from(["user", "assistant", "tool", "system"])
kinds = st.sampled_from(["prose", "injected", "console", "tool_output"])
candidates = st.lists(st.tuples(st.floats(0, 1), roles, kinds), max_size=20).map(
    lambda items: [
        Candidate(message_id=i, relevance=r, role=role, kind=kind)
        for i, (r, role, kind) in enumerate(items)
    ]
)


@given(candidates, st.booleans(), st.floats(0, 1))
def test_the_lift_only_raises_a_users_prose_and_keeps_the_list_best_first(ranked, asks, lift):
    before = {c.message_id: (c.relevance, c.role, c.kind) for c in ranked}
    asked_for.LIFT, saved = lift, asked_for.LIFT
    try:
        out = asked_for.lift(ranked, QueryIntent(asks_for_request=asks))
    finally:
        asked_for.LIFT = saved
    assert sorted(c.message_id for c in out) == sorted(before)
    for c in out:
        old, role, kind = before[c.message_id]
        if asks and role == "user" and kind == "prose":
            assert old <= c.relevance <= 1.0
            assert c.relevance - old <= lift * (1 - old) + 1e-12
        else:
            assert c.relevance == old
    if asks and lift:
        assert [c.relevance for c in out] == sorted((c.relevance for c in out), reverse=True)
