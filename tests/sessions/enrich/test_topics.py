"""sessions.enrich.topics: relevant, deterministic, clean keyphrases within the limit."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from sessions.enrich.text import STOPWORDS
from sessions.enrich.topics import derive_topics
from transcripts import parse_path

SHARED = Path(__file__).resolve().parents[4] / "shared"


@dataclass
class Msg:
    role: str
    content: str
    tool_name: str = ""
    author: str = ""
    metadata: dict = field(default_factory=dict)


VECTOR_DB_SESSION = [
    Msg(
        "system", "You are an architect. Prefer kubernetes everywhere.", metadata={"injected": True}
    ),
    Msg(
        "user",
        "We need a vector database for the session logger. Should we use ChromaDB or pgvector? "
        "See https://docs.trychroma.com/getting-started and src/session_logger/db.py.",
    ),
    Msg(
        "assistant",
        "ChromaDB is a local-first vector database: it runs in-process and persists to SQLite, "
        "so the session logger needs no server. pgvector needs PostgreSQL 12345 running.\n\n"
        "```python\nimport chromadb\nclient = chromadb.PersistentClient(path='zzyzxstore')\n```",
    ),
    Msg("assistant", "pip install chromadb==1.0.15", "Bash"),
    Msg(
        "tool", "Successfully installed chromadb-1.0.15 onnxruntime-1.19.2 deadbeefcafe1234", "Bash"
    ),
    Msg(
        "user",
        "OK, go with ChromaDB. How should embeddings work in the vector database, and which "
        "embedding model? Commit a1b2c3d4e5f6 has the schema.",
    ),
    Msg(
        "assistant",
        "ChromaDB computes embeddings with all-MiniLM-L6-v2 by default, so the vector database "
        "stores each session with its embeddings and metadata. The architecture stays simple: "
        "one ChromaDB collection, semantic search over embeddings with metadata filters.",
    ),
]


TOPIC_SHAPE = re.compile(r"^[a-z][a-z0-9+#]*(?:-[a-z0-9+#]+)*$")


def test_relevant_topics_on_a_written_example():
    topics = derive_topics(VECTOR_DB_SESSION)
    assert "chromadb" in topics
    assert "vector-database" in topics
    assert any(t.startswith("embedding") for t in topics)
    assert len(topics) == 5


def test_deterministic():
    first = derive_topics(VECTOR_DB_SESSION, entities=[("PACKAGE", "chromadb")])
    for _ in range(3):
        assert derive_topics(VECTOR_DB_SESSION, entities=[("PACKAGE", "chromadb")]) == first
    assert derive_topics(list(VECTOR_DB_SESSION)) == derive_topics(iter(VECTOR_DB_SESSION))


def test_no_stopwords_numbers_paths_urls_hashes_code_or_injected_text():
    topics = derive_topics(VECTOR_DB_SESSION, limit=20)
    assert topics
    for topic in topics:
        assert TOPIC_SHAPE.match(topic), topic
        assert len(topic) <= 64
        assert not all(part in STOPWORDS for part in topic.split("-")), topic
        assert topic.split("-")[0] not in STOPWORDS, topic
        assert not re.search(r"\d{3,}", topic), topic
    joined = " ".join(topics)
    for noise in (
        "trychroma",
        "session_logger",
        "12345",
        "a1b2c3d4e5f6",
        "deadbeef",
        "zzyzxstore",
        "persistentclient",
        "kubernetes",
        "onnxruntime",
    ):
        assert noise not in joined, noise


def test_limit_is_respected():
    assert len(derive_topics(VECTOR_DB_SESSION, limit=2)) == 2
    assert derive_topics(VECTOR_DB_SESSION, limit=0) == []
    assert derive_topics(VECTOR_DB_SESSION, limit=1) == [derive_topics(VECTOR_DB_SESSION)[0]]


def test_topics_are_hyphenated_lowercase():
    messages = [
        Msg("user", "The Support Group meets weekly. Our Support Group helps new members."),
        Msg("assistant", "A support group gives people a place to talk."),
    ]
    assert derive_topics(messages)[0] == "support-group"


def test_entities_add_their_short_forms():
    messages = [Msg("user", "Speed up the request handler, it is slow under load.")]
    entities = [
        ("PACKAGE", "fastapi"),
        ("PACKAGE", "fastapi"),
        ("FILE", "src/api/rate_limiter.py"),
        ("FILE", "src/__init__.py"),  # generic stems are not topics
        ("URL", "https://example.com/docs"),
        ("COMMAND", "ls -la"),
    ]
    topics = derive_topics(messages, entities=entities, limit=10)
    assert "fastapi" in topics
    assert "rate-limiter" in topics
    assert not {"init", "ls", "example"} & set(topics)


def test_empty_sessions_have_no_topics():
    assert derive_topics([]) == []
    assert derive_topics([Msg("user", "ok thanks")]) == []


def test_speakers_names_are_not_topics_in_a_chat():
    conversation = json.loads((SHARED / "data/locomo/locomo10.json").read_text())[0]
    turns = conversation["conversation"]["session_1"]
    messages = [Msg("user", t["text"], author=t["speaker"]) for t in turns]
    topics = derive_topics(messages)
    assert "painting" in topics
    assert not {"caroline", "melanie", "mel"} & set(topics)


def test_real_sample_topics():
    (parsed,) = parse_path(SHARED / "samples/aider/metadata-aider.chat.history.md")
    topics = derive_topics(parsed.messages)
    assert len(topics) == 5
    assert any("chart" in t or "frontend" in t for t in topics), topics
    assert not {"block", "confirm", "proceed", "search"} & set(topics)
