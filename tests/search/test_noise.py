"""Noise ranks below prose for the same match, unless the question asks for it; and the
relevance shown never goes up down a list. Through the real capture, pipeline (the real
model) and search API."""

from __future__ import annotations

import itertools

import pytest

from sessions.models import Message, MessageKind
from tests.search.corpus import capture, embed_all
from tests.search.test_api import client_for

pytestmark = pytest.mark.django_db

AIDER_BANNER = (
    "Aider v0.86.1\nModel: gpt-4o with diff edit format\nGit repo: .git with 41 files\n"
    "Repo-map: using 1024 tokens, auto refresh\n"
    "Tokens: 3.1k sent, 240 received. Cost: $0.0031 message, $0.0094 session.\n"
    "Applied edit to src/auth/refresh_tokens.py\n"
    "Commit 4be2c19 feat: handle JWT refresh tokens with rotation"
)
SYSTEM_PROMPT = (
    "You are a senior backend engineer. When you handle JWT refresh tokens, follow the "
    "team's security guidelines and never log a token."
)
QUESTION = "How do we handle JWT refresh tokens after the access token expires?"
ANSWER = (
    "We rotate them: every refresh issues a new refresh token and revokes the old one, and "
    "the tokens are stored hashed in Redis so a leaked database dump is useless."
)
TEST_RUN = (
    "============================= FAILURES =============================\n"
    "___________________ test_refresh_rotation ___________________\n"
    "    def test_refresh_rotation(client):\n"
    ">       assert store['refresh_token_hash'] != old_hash\n"
    "E       KeyError: 'refresh_token_hash'\n"
    "tests/test_auth.py:48: KeyError\n"
    "FAILED tests/test_auth.py::test_refresh_rotation - KeyError: 'refresh_token_hash'\n"
    "======================== 1 failed, 23 passed in 2.41s ========================"
)


@pytest.fixture
def noisy(project):
    session = capture(
        project,
        [
            ("system", SYSTEM_PROMPT),
            ("tool", AIDER_BANNER),
            ("user", QUESTION),
            ("assistant", ANSWER),
            ("tool", TEST_RUN),
            ("assistant", "The rotation test fails: the hash is stored under another key."),
        ],
        agent="aider",
        title="Refresh tokens",
    )
    capture(
        project,
        [("user", "What should I cook tonight?"), ("assistant", "A mushroom risotto.")],
        agent="chef",
    )
    embed_all()
    return session


def kinds_of(session) -> dict[int, str]:
    return dict(Message.objects.filter(session=session).values_list("seq", "kind"))


def test_the_noisy_session_is_classified_at_capture(noisy):
    assert kinds_of(noisy) == {
        0: MessageKind.INJECTED,
        1: MessageKind.CONSOLE,
        2: MessageKind.PROSE,
        3: MessageKind.PROSE,
        4: MessageKind.TOOL_OUTPUT,
        5: MessageKind.PROSE,
    }


def test_prose_ranks_above_a_banner_and_a_system_prompt_that_match_too(project, noisy):
    body = client_for(project).get("/api/v1/search", {"q": "how did we handle JWT refresh tokens?"})
    assert body.status_code == 200, body.content
    seqs = [hit["message"]["seq"] for hit in body.json()["results"]]
    assert seqs[0] in (2, 3)  # the question or its answer
    assert seqs.index(3) < seqs.index(1)  # the answer above the aider banner
    assert seqs.index(3) < seqs.index(0)  # and above the system prompt


def test_a_question_about_the_error_finds_the_tool_output_first(project, noisy):
    body = client_for(project).get(
        "/api/v1/search", {"q": "what KeyError did the refresh rotation test fail with?"}
    )
    assert body.status_code == 200, body.content
    assert body.json()["results"][0]["message"]["seq"] == 4


def test_a_question_about_the_instructions_finds_the_system_prompt(project, noisy):
    body = client_for(project).get(
        "/api/v1/search", {"q": "what did the system prompt say about refresh tokens?"}
    )
    assert body.json()["results"][0]["message"]["seq"] == 0


@pytest.mark.parametrize(
    "options",
    [{}, {"group": "true"}, {"mmr": "true"}, {"group": "true", "mmr": "true"}, {"recency": "true"}],
)
def test_shown_relevance_never_increases_down_any_list(project, noisy, options):
    client = client_for(project)
    for query in ("JWT refresh tokens", "KeyError refresh_token_hash", "risotto", "tokens"):
        body = client.get("/api/v1/search", {"q": query, "limit": 10, **options}).json()
        shown = [hit["relevance"] for hit in body["results"]]
        assert all(a >= b for a, b in itertools.pairwise(shown)), (query, shown)
        groups = body.get("sessions", [])
        assert all(a["relevance"] >= b["relevance"] for a, b in itertools.pairwise(groups))
        for group in groups:
            within = [hit["relevance"] for hit in group["hits"]]
            assert all(a >= b for a, b in itertools.pairwise(within))
            assert group["relevance"] == within[0]


def test_min_relevance_keeps_what_is_shown_at_or_above_it(project, noisy):
    client = client_for(project)
    everything = client.get("/api/v1/search", {"q": "JWT refresh tokens", "limit": 20}).json()
    shown = [hit["relevance"] for hit in everything["results"]]
    bar = sorted(shown)[len(shown) // 2]
    kept = client.get(
        "/api/v1/search", {"q": "JWT refresh tokens", "limit": 20, "min_relevance": bar}
    ).json()
    assert [hit["relevance"] for hit in kept["results"]] == [r for r in shown if r >= bar]


def test_a_quoted_phrase_asks_for_output_only_when_output_holds_it(noisy):
    from search.query_intent import intent_of
    from search.service import _candidate_facts, _quoted_phrases

    messages = dict(Message.objects.filter(session=noisy).values_list("seq", "id"))

    def asked(query):
        phrases = _quoted_phrases(intent_of(query))
        kinds, quoted_in_output, lifecycles = _candidate_facts(list(messages.values()), phrases)
        assert set(lifecycles) == {noisy.pk}
        return quoted_in_output, {seq: kinds[i][0] for seq, i in messages.items()}

    found, kinds = asked('where did we see "using 1024 TOKENS"')
    assert found
    assert kinds[1] == MessageKind.CONSOLE and kinds[4] == MessageKind.TOOL_OUTPUT
    assert kinds[3] == MessageKind.PROSE
    # A phrase that only prose holds asks for nothing more.
    assert not asked('who said "stored hashed in Redis"')[0]


INSTRUCTIONS = (
    "# AGENTS.md\nYou help with the booking service. Never refund a fare without the "
    "customer's reservation code, and always confirm the refund amount before you act."
)


def test_a_text_injected_into_every_session_is_shown_once(project):
    """The same AGENTS.md in five sessions is one result, the best-placed copy, so the
    answer that only one session holds is not pushed off the first page by copies: as soon
    as the sessions are captured (the pipeline has not embedded them yet) and after."""
    for day in range(5):
        capture(
            project,
            [("system", INSTRUCTIONS), ("user", f"Morning, day {day}: anything new in the queue?")],
            agent="booking",
            days_ago=day,
        )
    answer = capture(
        project,
        [
            ("system", INSTRUCTIONS),
            ("user", "Can we refund the fare for booking QX81?"),
            ("assistant", "Refunded 240 EUR for QX81 after the customer confirmed the amount."),
        ],
        agent="booking",
    )
    assert Message.objects.filter(content=INSTRUCTIONS).count() == 6

    def assert_shown_once(options):
        body = client_for(project).get(
            "/api/v1/search", {"q": "how did we refund the fare?", "limit": 5, **options}
        )
        assert body.status_code == 200, body.content
        found = [(hit["session"]["id"], hit["message"]["seq"]) for hit in body.json()["results"]]
        assert len([seq for _, seq in found if seq == 0]) == 1, (options, found)
        assert any(session == answer.public_id for session, _ in found), (options, found)
        return found

    for options in ({}, {"mode": "keyword"}):
        assert_shown_once(options)  # nothing embedded yet
    embed_all()
    for options in (
        {},
        {"group": "true"},
        {"mode": "semantic"},
        {"mode": "keyword"},
        {"mmr": "true"},
    ):
        assert (answer.public_id, 2) in assert_shown_once(options), options


def test_copies_are_the_same_text_by_the_same_author():
    from search import ranking

    def candidate(message_id, similarity, key, kind="injected"):
        c = ranking.Candidate(message_id, session_id=message_id, similarity=similarity, kind=kind)
        c.copy_key = key
        return c

    ranked = [
        candidate(1, 0.5, "system::a1"),
        candidate(2, 0.5, "system::a1"),  # a copy of 1
        candidate(3, 0.5, "user:ann:a1"),  # the same words, said by someone
        candidate(4, 0.4, None),  # no tie, never read
        candidate(5, 0.5, "system::b2"),  # a different text that happens to tie
    ]
    assert [c.message_id for c in ranking.without_copies(ranked)] == [1, 3, 4, 5]
    prose = candidate(6, 0.5, None, kind="prose")  # ties, but prose never collapses
    assert sorted(c.message_id for c in ranking.copy_suspects([*ranked, prose])) == [1, 2, 3, 5]
    # Not embedded yet: no similarity to tie, so every candidate of the kinds is a suspect.
    fresh = candidate(7, None, None, kind="console")
    suspects = ranking.copy_suspects([*ranked, prose, fresh])
    assert sorted(c.message_id for c in suspects) == [1, 2, 3, 4, 5, 7]
