"""A question about a person is answered by what they say about themselves: among the
named speaker's messages, a self-statement outranks their question on the same topic
(search/speakers.py), through the API."""

from __future__ import annotations

import pytest

from search import speakers, tuning
from tests.search.corpus import embed_all, ranked_turns
from tests.search.test_aggregate import chat
from tests.search.test_api import client_for

pytestmark = pytest.mark.django_db

QUESTION = "What does Maya do for a living?"
STATEMENT = "I work nights as a nurse at the children's hospital."
HER_QUESTION = "Is your job still fun?"
CHAT = [
    ("Leo", "Hi Maya, long time no see!"),
    ("Maya", STATEMENT),
    ("Leo", "Nice, tell me more."),
    ("Maya", HER_QUESTION),
    ("Leo", "Most days, yes: I build bookshelves in a small workshop."),
]


def order(client) -> list[str]:
    return [text for who, text in ranked_turns(client, QUESTION, CHAT) if who == "Maya"]


def test_a_persons_self_statement_outranks_their_question_on_the_same_topic(project, monkeypatch):
    chat(project, CHAT, days_ago=1)
    embed_all()
    client = client_for(project)
    assert order(client)[0] == STATEMENT
    # Without the lift her question, the closer paraphrase, comes first.
    monkeypatch.setattr(tuning, "SELF_LIFT", 0.0)
    assert order(client)[0] == HER_QUESTION


def test_only_a_short_message_ending_with_a_question_mark_is_a_question(project):
    """A turn of chat ending with "?" is a question; a long message that ends by asking
    something back still states what it states (and its end is never read: that would
    decompress all of it)."""
    from search.service import _candidate_facts
    from sessions.models import Message

    story = "I spent the whole summer rebuilding our old sailing boat. " * 40 + "Want to come?"
    assert len(story.encode()) > speakers.QUESTION_MAX_BYTES
    session = chat(project, [("Maya", HER_QUESTION), ("Maya", STATEMENT), ("Maya", story)], 1)
    ids = dict(Message.objects.filter(session=session).values_list("content", "id"))
    kinds, _, _ = _candidate_facts(list(ids.values()), [])
    first_person, question = ({text: kinds[i][n] for text, i in ids.items()} for n in (2, 3))
    assert question == {HER_QUESTION: True, STATEMENT: False, story: False}
    assert first_person == {HER_QUESTION: False, STATEMENT: True, story: True}
