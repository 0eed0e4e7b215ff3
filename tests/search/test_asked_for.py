"""A question about what someone asked for is answered by what a person said
(search/asked_for.py): the user's request outranks the assistant's account of the work that
followed, through the API (the lift's contract: tests/search/test_lifts.py)."""

from __future__ import annotations

import pytest

from search import tuning
from search.query_intent import intent_of
from tests.search.corpus import capture, embed_all, ranked_turns
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
    return [text for _, text in ranked_turns(client, QUESTION, WORK)]


@pytest.mark.django_db
def test_the_users_request_outranks_the_assistants_account_of_the_work(project, monkeypatch):
    capture(project, WORK, title="Reports")
    embed_all()
    client = client_for(project)
    assert order(client)[0] == REQUEST
    # Without the lift the account, which holds more of the question's words, comes first.
    monkeypatch.setattr(tuning, "ASKED_FOR_LIFT", 0.0)
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
