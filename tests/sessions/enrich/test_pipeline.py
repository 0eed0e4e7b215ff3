"""The enrichment pipeline with the real model: chunking, batched embedding, idempotence,
failure isolation, recovery. (The kill-and-restart test is in test_pipeline_recovery.py.)"""

import io
import itertools
from datetime import timedelta

import numpy as np
import pytest
from django.core.management import call_command
from django.utils import timezone
from pgvector.django import CosineDistance

from sessions.embedding.model_files import model_name
from sessions.embedding.tokens import count_tokens
from sessions.embedding.torch_runtime import embed
from sessions.enrich import pipeline
from sessions.enrich.chunking import (
    CHUNK_TOKENS,
    CONTEXT_TOKENS,
    CONTEXT_UNDER_TOKENS,
    chunk_message,
    context_for,
    header_for,
)
from sessions.models import Message, MessageChunk
from tests.factories import MessageFactory, SessionFactory

pytestmark = pytest.mark.django_db

FILLER = (
    "The quarterly planning meeting covered hiring, the office move and the new coffee "
    "machine, none of which matters for the search below. "
)


def test_short_messages_are_one_chunk_and_empty_ones_none():
    assert chunk_message("") == []
    assert chunk_message("   \n ") == []
    [only] = chunk_message("Fix the login bug", header="user: ")
    assert (only.index, only.char_start, only.char_end) == (0, 0, 17)
    assert only.text == "user: Fix the login bug"


def test_long_messages_are_cut_into_overlapping_chunks_that_cover_everything():
    text = FILLER * 60 + "The deploy key lives in vault path secret/deploy."
    chunks = chunk_message(text, header="assistant: ")
    assert len(chunks) > 5
    covered = np.zeros(len(text), dtype=bool)
    for chunk in chunks:
        covered[chunk.char_start : chunk.char_end] = True
        assert count_tokens([chunk.text.removeprefix("assistant: ")])[0] <= CHUNK_TOKENS
    assert covered[: len(text.rstrip())].all()
    for before, after in itertools.pairwise(chunks):
        assert after.char_start < before.char_end  # overlap: no sentence lost at a boundary
    assert chunks[-1].text.endswith("secret/deploy.")


def test_headers_say_who_spoke():
    assert header_for("user") == "user: "
    assert header_for("assistant", "Winston") == "Winston: "
    assert header_for("assistant", "", "Bash") == "assistant (Bash): "
    assert header_for("tool", "", "Bash") == "Bash output: "


def test_a_short_message_is_embedded_after_the_turn_it_follows_and_a_long_one_alone():
    context = context_for("Do you like hiking?", header="Mel: ")
    assert context == "Mel: Do you like hiking?\n"
    [reply] = chunk_message("Yes, every weekend!", header="Caroline: ", context=context)
    assert reply.text == "Mel: Do you like hiking?\nCaroline: Yes, every weekend!"
    # The span is the message's own text, which the chunk's text ends with (snippets).
    assert (reply.index, reply.char_start, reply.char_end) == (0, 0, 19)
    assert reply.token_ids == tuple(count_ids(reply.text))

    long_reply = "Yes, " + "we walk the ridge above the lake every weekend " * 4
    assert count_tokens([long_reply])[0] >= CONTEXT_UNDER_TOKENS
    [alone] = chunk_message(long_reply, header="Caroline: ", context=context)
    assert alone.text == "Caroline: " + long_reply


def test_a_context_is_the_end_of_the_previous_turn_from_a_whole_word():
    assert context_for("  \n ") == ""
    words = " ".join(f"unbelievably{i}" for i in range(200))  # several pieces a word
    context = context_for(words, header="user: ")
    kept = context.removeprefix("user: ").removesuffix("\n")
    assert words.endswith(kept) and words[-len(kept) - 1] == " "
    assert CONTEXT_TOKENS - 8 < count_tokens([kept])[0] <= CONTEXT_TOKENS


def count_ids(text: str) -> list[int]:
    from sessions.embedding.tokens import tokenizer

    return tokenizer().encode(text, add_special_tokens=False).ids


def test_the_pipeline_embeds_a_short_reply_with_what_it_answers():
    session = SessionFactory()
    question = MessageFactory(
        session=session, seq=0, author="Mel", content="Do you like hiking in the Alps?"
    )
    reply = MessageFactory(session=session, seq=1, author="Caroline", content="Yes, every weekend!")
    MessageFactory(  # a tombstone (sessions/forget/messages.py)
        session=session,
        seq=2,
        content="[message removed]",
        removed_at=timezone.now(),
        enrichment_status="done",
    )
    after_gone = MessageFactory(session=session, seq=3, author="Mel", content="Me too.")
    tool_output = MessageFactory(
        session=session, seq=4, role="tool", tool_name="Bash", content="Error: no seats left"
    )
    after_output = MessageFactory(session=session, seq=5, author="Mel", content="Oh no.")
    while pipeline.embed_pending_messages():
        pass
    [first] = MessageChunk.objects.filter(message=question)
    assert first.text == "Mel: Do you like hiking in the Alps?"
    [chunk] = MessageChunk.objects.filter(message=reply)
    assert chunk.text == "Mel: Do you like hiking in the Alps?\nCaroline: Yes, every weekend!"
    assert (chunk.char_start, chunk.char_end) == (0, len(reply.content))
    # A removed message's words are no one's context.
    [plain] = MessageChunk.objects.filter(message=after_gone)
    assert plain.text == "Mel: Me too."
    # A tool's output means what it says: it neither takes a context nor is one.
    [output] = MessageChunk.objects.filter(message=tool_output)
    assert output.text == "Bash output: Error: no seats left"
    [reply_to_output] = MessageChunk.objects.filter(message=after_output)
    assert reply_to_output.text == "Mel: Oh no."

    # Found by what it answers: far nearer a question about hiking than its words alone.
    query = embed(["Does Caroline go hiking?"])[0]
    alone = embed(["Caroline: Yes, every weekend!"])[0]
    assert float(np.dot(np.asarray(chunk.embedding), query)) > float(np.dot(alone, query)) + 0.05


def test_reembed_all_gives_messages_embedded_alone_their_context():
    session = SessionFactory()
    MessageFactory(session=session, seq=0, author="Mel", content="Do you like hiking?")
    reply = MessageFactory(session=session, seq=1, author="Caroline", content="Yes!")
    while pipeline.embed_pending_messages():
        pass
    # As a build before context vectors stored it: the reply alone.
    MessageChunk.objects.filter(message=reply).update(text="Caroline: Yes!")
    call_command("reembed", "--all", stdout=io.StringIO())
    [chunk] = MessageChunk.objects.filter(message=reply)
    assert chunk.text == "Mel: Do you like hiking?\nCaroline: Yes!"


def test_embedding_pending_messages_makes_searchable_chunks_once(clean_vector_index):
    session = SessionFactory()
    needle = "The deploy key lives in vault path secret/deploy."
    # The short one first: after the long one, it would be embedded with its end (the needle).
    short = MessageFactory(session=session, seq=0, content="Use OAuth2 with PKCE for the SPA.")
    long_message = MessageFactory(session=session, seq=1, content=FILLER * 40 + needle)
    empty = MessageFactory(session=session, seq=2, content="")

    assert pipeline.embed_pending_messages() == 3
    for message in (long_message, short, empty):
        message.refresh_from_db()
        assert message.enrichment_status == "done"
    assert MessageChunk.objects.filter(message=empty).count() == 0
    assert MessageChunk.objects.filter(message=short).count() == 1
    long_chunks = MessageChunk.objects.filter(message=long_message).count()
    assert long_chunks == len(chunk_message(long_message.content))
    assert set(MessageChunk.objects.values_list("model", flat=True)) == {model_name()}

    # The end of the long message is findable by meaning, through its own chunk.
    query = embed(["where is the deploy key stored?"])[0]
    best = MessageChunk.objects.order_by(CosineDistance("embedding", query)).first()
    assert best.message_id == long_message.id
    assert "secret/deploy" in best.text

    # Nothing pending: nothing done. Forced again: chunks replaced, not added.
    assert pipeline.embed_pending_messages() == 0
    Message.objects.update(enrichment_status="pending")
    assert pipeline.embed_pending_messages() == 3
    assert MessageChunk.objects.filter(message=long_message).count() == long_chunks
    assert MessageChunk.objects.count() == long_chunks + 1


def test_batches_span_sessions_and_respect_the_limit():
    for s in range(3):
        session = SessionFactory()
        for i in range(4):
            MessageFactory(session=session, seq=i, content=f"session {s} message {i}")
    assert pipeline.embed_pending_messages(limit=5) == 5
    assert pipeline.embed_pending_messages(limit=5) == 5
    assert pipeline.embed_pending_messages(limit=5) == 2
    assert MessageChunk.objects.values("session_id").distinct().count() == 3


def test_a_message_the_model_chokes_on_fails_alone_with_a_reason(monkeypatch):
    session = SessionFactory()
    good = MessageFactory(session=session, seq=0, content="a perfectly normal message")
    bad = MessageFactory(session=session, seq=1, content="POISON pill")
    real_embed = pipeline.embed

    def choking_embed(texts, **kwargs):
        if any("POISON" in t for t in texts):
            raise ValueError("cannot embed this text")
        return real_embed(texts, **kwargs)

    monkeypatch.setattr(pipeline, "embed", choking_embed)
    assert pipeline.embed_pending_messages() == 2
    good.refresh_from_db()
    bad.refresh_from_db()
    assert good.enrichment_status == "done"
    assert bad.enrichment_status == "failed"
    assert bad.enrichment_error == "ValueError: cannot embed this text"
    assert bad.enrichment_attempts == 1
    assert pipeline.pipeline_state()["messages"]["failed"] == 1

    # The sweeper retries it after a backoff of 2^attempts minutes, not before.
    assert pipeline.requeue_failed() == 0
    assert pipeline.requeue_failed(now=timezone.now() + timedelta(minutes=3)) == 1
    monkeypatch.setattr(pipeline, "embed", real_embed)
    bad.refresh_from_db()
    bad.content = "no longer poison"
    bad.save()
    assert pipeline.embed_pending_messages() == 1
    bad.refresh_from_db()
    assert bad.enrichment_status == "done"


def test_junk_and_any_language_embed(monkeypatch):
    session = SessionFactory()
    texts = [
        bytes(range(1, 256)).decode("latin-1") * 20,  # binary junk, as text
        "مرحبا بالعالم، كيف حالك اليوم؟",
        "日本語のテキストも検索できるべきです。",
        "🔥" * 500,
        "x" * 100_000,  # one long "word": many word pieces, many chunks
    ]
    for i, text in enumerate(texts):
        MessageFactory(session=session, seq=i, content=text)
    assert pipeline.embed_pending_messages() == len(texts)
    assert not Message.objects.exclude(enrichment_status="done").exists()
    assert MessageChunk.objects.filter(message__seq=4).count() > 10


def test_the_pipeline_api_counts_only_what_the_caller_sees(team, project):
    """A project token sees its own project's backlog, not its teammates' projects' (nor
    another team's)."""
    from rest_framework.test import APIClient

    from teams.models import ApiToken
    from tests.factories import ProjectFactory, SessionFactory

    neighbour = ProjectFactory(team=team)
    for where, failed in ((project, 1), (neighbour, 2), (ProjectFactory(), 4)):
        for _ in range(failed):
            SessionFactory(project=where, enrichment_status="failed")
    _, raw = ApiToken.issue(project)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    body = client.get("/api/v1/pipeline").json()
    assert body["sessions"]["failed"] == 1
