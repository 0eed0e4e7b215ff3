"""Whether a question asks for tool output, console lines or injected instructions
(search/query_intent.py)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from search.query_intent import intent_of


@pytest.mark.parametrize(
    "query",
    [
        "why did the migration fail?",
        "what error did pytest print for the login test",
        "the traceback from the celery worker",
        "which command rebuilt the docker image",
        "how did we run the seed script",
        "what does src/auth/tokens.py do",
        "cat /etc/nginx/nginx.conf",
        "what did ~/.bashrc set",
        "git log --oneline output",
        "pip install -e fails",
        "the `make release` target",
        "where is refresh_token_ttl set",
        "who calls rotate_keys()",
        "KeyError in the parser",
        "a PaymentDeclined exception",
        "stack trace of the crash",
        "show me the logs",
    ],
)
def test_error_and_command_questions_ask_for_output(query):
    assert intent_of(query).wants_output


@pytest.mark.parametrize(
    "query",
    [
        "how did we handle JWT refresh tokens?",
        "what are Caroline's hobbies?",
        "which database did we pick and why",
        "when did we switch to and/or logic",
        "is 3/4 of the budget spent",
        "what did Melanie paint last summer",
        "what is the e-mail of the support team",
        "Tokyo または 京都？",
        "🚀",
        "",
    ],
)
def test_plain_questions_do_not(query):
    assert not intent_of(query).wants_output


@pytest.mark.parametrize(
    "query",
    [
        "what instructions does AGENTS.md give",
        "the system prompt of the airline agent",
        "which skills were available",
        "the baggage policy",
        "what does CLAUDE.md say about tests",
    ],
)
def test_questions_about_instructions_ask_for_injected_text(query):
    assert intent_of(query).wants_injected


def test_plain_questions_do_not_ask_for_injected_text():
    assert not intent_of("how did we handle JWT refresh tokens?").wants_injected
    assert not intent_of("why did the build fail").wants_injected


def test_quoted_phrases_are_returned_apart():
    assert intent_of('where did "card declined" come from').quoted == ("card declined",)
    assert intent_of("we saw “connection reset by peer” twice").quoted == (
        "connection reset by peer",
    )
    assert intent_of("it's Kate's 'big day' today").quoted == ("big day",)
    assert intent_of("no quotes here").quoted == ()


@given(st.text(max_size=500))
def test_any_text_gives_an_intent(query):
    intent = intent_of(query)
    assert isinstance(intent.wants_output, bool)
    assert all(phrase for phrase in intent.quoted)
