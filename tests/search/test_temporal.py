"""A question that asks when is answered by the message that says when (search/temporal.py):
it outranks the neighbour that names the thing asked about, through the API; and the lift's
contract."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from search import temporal
from search.query_intent import QueryIntent, intent_of
from search.ranking import Candidate
from tests.search.corpus import embed_all
from tests.search.test_aggregate import chat
from tests.search.test_api import client_for

QUESTION = "When did Priya start her cello lessons?"
SAYS_WHEN = "I signed up for music lessons at last, three weeks ago: every Tuesday after work."
NAMES_IT = "The cello! It's the best thing I've taken up, though it is hard on the fingers."
CHAT = [
    ("Tom", "Priya! What have you been up to?"),
    ("Priya", SAYS_WHEN),
    ("Tom", "That's great! Which instrument?"),
    ("Priya", NAMES_IT),
    ("Tom", "Nice, I should pick up the guitar again."),
]


def order(client) -> list[str]:
    response = client.get("/api/v1/search", {"q": QUESTION, "limit": 10})
    assert response.status_code == 200, response.content
    results = response.json()["results"]
    relevances = [r["relevance"] for r in results]
    assert relevances == sorted(relevances, reverse=True)
    return [CHAT[r["message"]["seq"]][1] for r in results]  # a seq is the place in the chat


@pytest.mark.django_db
def test_the_message_that_says_when_outranks_the_one_that_names_the_thing(project, monkeypatch):
    chat(project, CHAT, days_ago=1)
    embed_all()
    client = client_for(project)
    ranked = order(client)
    assert ranked.index(SAYS_WHEN) < ranked.index(NAMES_IT)
    # Without the lift the question's words win.
    monkeypatch.setattr(temporal, "LIFT", 0.0)
    ranked = order(client)
    assert ranked.index(NAMES_IT) < ranked.index(SAYS_WHEN)


@pytest.mark.parametrize(
    "query",
    [
        "When did Priya start her cello lessons?",
        "when was the database migrated",
        "What year did they move to Lisbon?",
        "In which month did the outage happen?",
        "How long has Sam been painting?",
        "How many weeks did the trip last?",
        "and when is the next release?",
    ],
)
def test_a_question_that_asks_when(query):
    assert intent_of(query).asks_when


@pytest.mark.parametrize(
    "query",
    [
        "What did Priya learn?",
        "Where does Sam paint?",
        "why did the migration fail?",
        "how many dogs does Audrey have?",
        "what happened when the deploy failed?",
        "",
    ],
)
def test_a_question_that_does_not_ask_when(query):
    assert not intent_of(query).asks_when


candidates = st.lists(st.tuples(st.floats(0, 1), st.booleans()), max_size=20).map(
    lambda items: [
        Candidate(message_id=i, relevance=r, says_when=w) for i, (r, w) in enumerate(items)
    ]
)


@given(candidates, st.booleans(), st.floats(0, 1))
def test_the_lift_only_raises_what_says_when_and_keeps_the_list_best_first(ranked, asks_when, lift):
    before = {c.message_id: (c.relevance, c.says_when) for c in ranked}
    temporal.LIFT, saved = lift, temporal.LIFT
    try:
        out = temporal.lift(ranked, QueryIntent(asks_when=asks_when))
    finally:
        temporal.LIFT = saved
    assert sorted(c.message_id for c in out) == sorted(before)
    for c in out:
        old, says_when = before[c.message_id]
        if asks_when and says_when:
            assert old <= c.relevance <= 1.0
            assert c.relevance - old <= lift * (1 - old) + 1e-12
        else:
            assert c.relevance == old
    if asks_when and lift:
        assert [c.relevance for c in out] == sorted((c.relevance for c in out), reverse=True)
