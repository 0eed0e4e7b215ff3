"""The ONNX query encoder gives the vectors torch gives, is exported once, and never stops
a search when it cannot be made."""

import logging

import numpy as np
import pytest
from django.core.management import call_command

from sessions.embedding import query as qe
from sessions.embedding.query import embed_query
from sessions.embedding.torch_runtime import embed

TEXTS = [
    "How did we handle auth in the login service?",
    "a",
    "Как мы настроили деплой? 認証はどうなった？ ¿Y la caché?",
    "def refresh_token(user):\n    return jwt.encode({'sub': user.id}, KEY)",
    "retry " * 600,  # past the model's 256 word pieces
]


@pytest.fixture
def fresh_encoder(settings, tmp_path):
    """A cache folder of its own, so the encoder is exported (not found) here."""
    settings.MODEL_CACHE_DIR = str(tmp_path / "models")
    qe.clear_caches()
    yield tmp_path / "models"
    qe.clear_caches()


def test_query_vectors_match_torch_for_any_text():
    assert qe.query_encoder() is not None
    expected = embed(TEXTS)
    for text, vector in zip(TEXTS, expected, strict=True):
        got = embed_query(text)
        assert got.dtype == np.float32 and got.shape == (384,)
        assert abs(float(np.linalg.norm(got)) - 1) < 1e-5
        assert float(got @ vector) > 0.9999, text[:30]


def test_several_queries_at_once_are_the_vectors_of_each_alone():
    together = qe.embed_queries(TEXTS)
    assert together.shape == (len(TEXTS), 384)
    for text, vector in zip(TEXTS, together, strict=True):
        assert float(embed_query(text) @ vector) > 0.99999, text[:30]


def test_the_export_is_made_once_checked_and_reused(fresh_encoder):
    call_command("prepare_query_encoder")
    graph = fresh_encoder / "all-MiniLM-L6-v2.onnx"
    assert graph.is_file()
    assert [p.name for p in fresh_encoder.iterdir()] == [graph.name]  # no partial file left
    made = graph.stat().st_mtime_ns

    qe.clear_caches()  # as a new process would
    encoder = qe.query_encoder()
    assert encoder is not None
    assert graph.stat().st_mtime_ns == made
    question = "which sessions touched src/auth.py?"
    assert float(encoder.encode(question) @ embed([question])[0]) > 0.9999


def test_a_failed_export_leaves_queries_on_torch(fresh_encoder, caplog):
    fresh_encoder.parent.mkdir(exist_ok=True)
    fresh_encoder.write_text("a file where the cache folder should be")
    with caplog.at_level(logging.WARNING, logger="sessions.embedding.onnx_runtime"):
        assert qe.query_encoder() is None
        vector = embed_query("deploy with docker compose")
    assert "torch serves instead" in caplog.text
    assert float(vector @ embed(["deploy with docker compose"])[0]) > 0.9999
