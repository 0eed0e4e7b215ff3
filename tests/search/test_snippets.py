"""Snippets (search/snippets.py) over real PostgreSQL ``ts_headline``: they start and end on
word boundaries, never cut a redaction marker, say where text was cut, and their highlights
point at the query's words."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from search import keyword
from search.snippets import ELLIPSIS, snippets
from sessions.capture.redaction import MARK
from sessions.enrich.chunking import chunk_message
from sessions.models import MessageChunk
from tests.factories import MessageFactory, SessionFactory

pytestmark = pytest.mark.django_db

MARKERS = [MARK.format(kind) for kind in ("openai_key", "email", "private_key", "bearer_token")]
WORDS = [
    "token", "tokens", "refresh", "deploy", "deployed", "kubernetes", "src/auth.py", "the",
    "a", "of", "JWT", "rotate", "rotation", "error:", "(see", "docs)", "key=value", "42",
    "naïve", "日本語", "x", "supercalifragilisticexpialidociousness-and-then-some-more",
]  # fmt: skip
MARKER_SHAPE = re.compile(r"\[REDACTED:[^\]\s]*\]")


def _message(session, seq: int, content: str, chunk_index: int | None):
    """A message with every chunk the pipeline would store (a dummy vector each), and the
    chunk ``chunk_index`` (the hit's best one; the last when there are fewer), or None."""
    message = MessageFactory(session=session, seq=seq, content=content)
    if chunk_index is None:
        return message, None
    chunks = [
        MessageChunk.objects.create(
            session=session,
            team=session.team,
            message=message,
            index=chunk.index,
            char_start=chunk.char_start,
            char_end=chunk.char_end,
            text=chunk.text,
            embedding=np.ones(384, dtype=np.float32),
            model="test",
        )
        for chunk in chunk_message(content, header="user: ")
    ]
    return message, chunks[min(chunk_index, len(chunks) - 1)]


def _words(text: str) -> list[str]:
    return text.split()


def _passages(snippet_text: str) -> list[str]:
    return [p.strip() for p in snippet_text.split(ELLIPSIS) if p.strip()]


def _tsquery(words: list[str]) -> str | None:
    return keyword.parse(" ".join(words)).any_term


def _lexemes(text: str) -> tuple[str, ...]:
    return keyword.parse(text).terms


texts = st.lists(
    st.one_of(st.sampled_from(WORDS), st.sampled_from(MARKERS)), min_size=1, max_size=600
).map(" ".join)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    content=texts,
    query=st.lists(st.sampled_from([*WORDS, "openai", "key", "redacted"]), max_size=4),
    chunk_index=st.one_of(st.none(), st.integers(0, 8)),
    glue=st.sampled_from([" ", "\n", "=", ""]),
)
def test_snippets_keep_whole_words_and_markers_and_highlight_matched_words(
    project, content, query, chunk_index, glue
):
    # Markers glued to their neighbours ("key=[REDACTED:openai_key]") are common in logs.
    content = content.replace(" [REDACTED", glue + "[REDACTED") if glue != " " else content
    session = SessionFactory(project=project, team=project.team)
    message, chunk = _message(session, 0, content, chunk_index)
    found = snippets([(message.id, chunk and chunk.id)], _tsquery(query))[message.id]
    tokens = set(_words(content))

    for passage in _passages(found.text):
        # Every whitespace-separated word of a passage is a whole word of the message: no
        # passage starts or ends inside a word, a path or a marker.
        assert all(word in tokens for word in _words(passage)), passage
        # No piece of a marker is left once the whole markers are taken out (the words
        # themselves hold no bracket).
        assert not re.search(r"[\[\]]|REDACTED", MARKER_SHAPE.sub("", passage)), passage
    wanted = set(_lexemes(" ".join(query)))
    for start, end in found.highlights:
        marked = found.text[start:end]
        # A highlight is one of the query's words, as the english configuration stems it.
        assert marked.strip() == marked and ELLIPSIS not in marked
        assert set(_lexemes(marked)) & wanted, (marked, query)
    # An ellipsis wherever the message goes on before or after the snippet.
    passages = _passages(found.text)
    if passages and not content.lstrip().startswith(passages[0]):
        assert found.text.startswith(ELLIPSIS)
    if passages and not content.rstrip().endswith(passages[-1]):
        assert found.text.endswith(ELLIPSIS)


def test_a_marker_cut_by_the_region_is_left_out_and_the_cut_is_shown(project):
    session = SessionFactory(project=project, team=project.team)
    secret = MARK.format("openai_key")
    content = ("filler " * 30) + f"export OPENAI_API_KEY={secret} then deploy the token service"
    message = MessageFactory(session=session, seq=0, content=content)
    start = content.index(secret) + 5  # a chunk whose span starts inside the marker
    chunk = MessageChunk.objects.create(
        session=session, team=session.team, message=message, index=0, char_start=start,
        char_end=len(content), text=content[start:], embedding=np.ones(384), model="test",
    )  # fmt: skip
    found = snippets([(message.id, chunk.id)], _tsquery(["token", "deploy"]))[message.id]
    assert found.text.startswith(f"{ELLIPSIS} ")
    assert "REDACTED" not in found.text or secret in found.text
    assert {found.text[s:e] for s, e in found.highlights} == {"deploy", "token"}


def test_a_whole_short_message_has_no_ellipsis(project):
    session = SessionFactory(project=project, team=project.team)
    message, chunk = _message(session, 0, "Rotate the JWT refresh token daily.", 0)
    found = snippets([(message.id, chunk.id)], _tsquery(["refresh"]))[message.id]
    assert found.text == "Rotate the JWT refresh token daily."
    assert [found.text[s:e] for s, e in found.highlights] == ["refresh"]


def test_a_long_message_without_a_chunk_is_cut_after_a_whole_word(project):
    session = SessionFactory(project=project, team=project.team)
    content = "deploy " + "abcdefghij" * 5000  # one huge token after the match
    message = MessageFactory(session=session, seq=0, content=content)
    found = snippets([(message.id, None)], _tsquery(["deploy"]))[message.id]
    assert found.text == f"deploy {ELLIPSIS}"
    assert found.highlights == [(0, 6)]


def test_a_chunk_embedded_with_the_previous_turn_shows_only_the_message(project):
    session = SessionFactory(project=project, team=project.team)
    content = "Yes, every weekend!"
    message = MessageFactory(session=session, seq=1, content=content)
    [planned] = chunk_message(
        content, header="Caroline: ", context="Mel: Do you like hiking in the Alps?\n"
    )
    chunk = MessageChunk.objects.create(
        session=session, team=session.team, message=message, index=planned.index,
        char_start=planned.char_start, char_end=planned.char_end, text=planned.text,
        embedding=np.ones(384), model="test",
    )  # fmt: skip
    found = snippets([(message.id, chunk.id)], _tsquery(["hiking", "weekend"]))[message.id]
    assert found.text == content
    assert [found.text[s:e] for s, e in found.highlights] == ["weekend"]
