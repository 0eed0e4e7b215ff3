"""A question that asks when is answered by the message that says when (search/temporal.py):
it outranks the neighbour that names the thing asked about, through the API (the lift's
contract: tests/search/test_lifts.py)."""

from __future__ import annotations

import pytest

from search import tuning
from search.query_intent import intent_of
from tests.search.corpus import embed_all, ranked_turns
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
    return [text for _, text in ranked_turns(client, QUESTION, CHAT)]


@pytest.mark.django_db
def test_the_message_that_says_when_outranks_the_one_that_names_the_thing(project, monkeypatch):
    chat(project, CHAT, days_ago=1)
    embed_all()
    client = client_for(project)
    ranked = order(client)
    assert ranked.index(SAYS_WHEN) < ranked.index(NAMES_IT)
    # Without the lift the question's words win.
    monkeypatch.setattr(tuning, "TEMPORAL_LIFT", 0.0)
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
