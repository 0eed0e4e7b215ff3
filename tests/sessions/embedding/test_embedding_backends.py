"""The ONNX batch backends give torch's vectors (fp32 to rounding, int8 close), pool only
the real tokens of a padded batch, read the chunker's word pieces as their own, fall back to
torch when their graph cannot be made, and the setting that picks them is validated."""

import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from django.core.exceptions import ImproperlyConfigured
from hypothesis import given
from hypothesis import strategies as st

from core.env import env_choice
from sessions.embedding import backend, query
from sessions.embedding.model_files import onnx_graph_path
from sessions.embedding.onnx_runtime import BATCH_TOKENS, _batches, onnx_encoder
from sessions.embedding.query import embed_query
from sessions.embedding.torch_runtime import embed as embed_by_torch
from sessions.enrich.chunking import chunk_message, header_for

TEXTS = [
    "a",
    "How did we handle auth in the login service?",
    "Как мы настроили деплой? 認証はどうなった？ ¿Y la caché? Ünïcödé naïve café",
    "def refresh_token(user):\n    return jwt.encode({'sub': user.id}, KEY)",
    "Caroline: I went to the LGBTQ support group yesterday and it was so powerful.",
    "retry " * 600,  # past the model's 256 word pieces: truncated as torch truncates
    "",
]


@pytest.fixture
def fresh_backends():
    query.clear_caches()
    yield
    query.clear_caches()


@pytest.mark.parametrize(("variant", "lowest"), [("fp32", 0.9999), ("int8", 0.97)])
def test_batches_agree_with_torch(variant, lowest, fresh_backends):
    encoder = onnx_encoder(variant, 1)
    assert encoder is not None
    got = encoder.encode_batch(TEXTS)
    expected = embed_by_torch(TEXTS)
    assert got.dtype == np.float32 and got.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(got, axis=1), 1, atol=1e-5)
    cosines = np.einsum("ij,ij->i", got, expected)
    assert cosines.min() >= lowest, cosines
    assert np.median(cosines) >= 0.99, cosines


# int8: dynamic quantisation scales activations by the range of the whole batch tensor, so
# a text's int8 vector moves a little with its batchmates (not only with padding).
@pytest.mark.parametrize(("variant", "same"), [("fp32", 0.99999), ("int8", 0.99)])
def test_a_short_text_beside_a_long_one_is_pooled_over_its_own_tokens(
    variant, same, fresh_backends
):
    encoder = onnx_encoder(variant, 1)
    short, long = "deploy key", "the deploy pipeline failed again on the staging cluster " * 20
    alone = encoder.encode(short)
    # Batches of 2: the short text is padded to the long one's length within its batch;
    # the output comes back in the input's order although batches are sorted by length.
    together = encoder.encode_batch([long, short, long], batch_size=2)
    assert float(alone @ together[1]) > same
    assert float(together[0] @ together[2]) > same
    assert float(together[0] @ together[1]) < 0.9


def test_the_chunkers_word_pieces_are_the_embedders_own(fresh_backends):
    encoder = onnx_encoder("fp32", 1)
    contents = [*TEXTS[:5], "word " * 700, "x" * 5000, "ok\n\n  spaced\tout  "]
    for content in contents:
        for chunk in chunk_message(content, header=header_for("assistant", "Winston", "Bash")):
            assert chunk.token_ids is None or len(chunk.token_ids) > 0
            if chunk.token_ids is None:
                continue
            if chunk.index == 0 and chunk.char_end == len(content):  # one chunk: exactly
                assert list(chunk.token_ids) == encoder.token_ids([chunk.text])[0]
            given = encoder.encode_batch([chunk.text], token_ids=[list(chunk.token_ids)])[0]
            assert float(given @ encoder.encode(chunk.text)) > 0.999, content[:20]


def test_int8_graph_is_derived_once_beside_the_fp32_one(settings, tmp_path, fresh_backends):
    assert onnx_encoder("fp32", 1) is not None  # the fp32 graph exists: copy it, not export
    shutil.copy(onnx_graph_path("fp32"), tmp_path)
    settings.MODEL_CACHE_DIR = str(tmp_path)
    assert onnx_encoder("int8", 1) is not None
    graph = tmp_path / "all-MiniLM-L6-v2.int8.onnx"
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "all-MiniLM-L6-v2.int8.onnx",
        "all-MiniLM-L6-v2.onnx",
    ]  # no partial file left
    made = graph.stat().st_mtime_ns
    query.clear_caches()  # as a new process would
    assert onnx_encoder("int8", 1) is not None
    assert graph.stat().st_mtime_ns == made


@pytest.mark.parametrize("chosen", ["onnx", "onnx-int8"])
def test_a_graph_that_cannot_be_made_leaves_embedding_on_torch(
    chosen, settings, tmp_path, caplog, fresh_backends
):
    blocked = tmp_path / "models"
    blocked.write_text("a file where the cache folder should be")
    settings.MODEL_CACHE_DIR = str(blocked)
    settings.EMBEDDING_BACKEND = chosen
    with caplog.at_level(logging.WARNING, logger="sessions.embedding.onnx_runtime"):
        assert backend.document_encoder() is None
        vectors = backend.embed(TEXTS[:3])
        query_vector = embed_query(TEXTS[1])
    assert "torch serves instead" in caplog.text
    expected = embed_by_torch(TEXTS[:3])
    assert np.einsum("ij,ij->i", vectors, expected).min() > 0.99999
    assert float(query_vector @ expected[1]) > 0.99999


def test_queries_are_embedded_in_the_documents_space(settings, fresh_backends):
    settings.EMBEDDING_BACKEND = "onnx-int8"
    int8 = onnx_encoder("int8", 1)
    text = "which sessions touched src/auth.py?"
    assert backend.resolved_backend() == "onnx-int8"
    assert float(embed_query(text) @ backend.embed([text])[0]) > 0.99999
    assert float(embed_query(text) @ int8.encode(text)) > 0.99999


def test_auto_is_torch_on_cuda_and_the_measured_default_on_cpu(settings, fresh_backends):
    settings.EMBEDDING_BACKEND = "auto"
    settings.EMBEDDING_DEVICE = "cpu"
    assert backend.resolved_backend() == backend.CPU_DEFAULT
    settings.EMBEDDING_DEVICE = "cuda"
    assert backend.resolved_backend() == "torch"
    settings.EMBEDDING_DEVICE = "auto"  # this machine has no NVIDIA driver
    assert backend.resolved_backend() == backend.CPU_DEFAULT
    settings.EMBEDDING_BACKEND = "torch"
    assert backend.document_encoder() is None


def test_the_backend_setting_is_validated(monkeypatch):
    choices = ("auto", "torch", "onnx", "onnx-int8")
    monkeypatch.setenv("EMBEDDING_BACKEND", "ONNX-int8")
    assert env_choice("EMBEDDING_BACKEND", "auto", choices) == "onnx-int8"
    monkeypatch.setenv("EMBEDDING_BACKEND", "")
    assert env_choice("EMBEDDING_BACKEND", "auto", choices) == "auto"
    monkeypatch.setenv("EMBEDDING_BACKEND", "gpu")
    with pytest.raises(ImproperlyConfigured, match="EMBEDDING_BACKEND='gpu' is not one of"):
        env_choice("EMBEDDING_BACKEND", "auto", choices)


def test_a_wrong_backend_stops_the_process_at_start():
    env = dict(os.environ, EMBEDDING_BACKEND="gpu")
    ran = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=Path(__file__).resolve().parents[3],
        env=env,
        capture_output=True,
        text=True,
    )
    assert ran.returncode != 0
    assert "EMBEDDING_BACKEND='gpu' is not one of: auto, torch, onnx, onnx-int8" in ran.stderr


@given(
    lengths=st.lists(st.integers(min_value=1, max_value=256), max_size=120),
    batch_size=st.integers(min_value=1, max_value=40),
)
def test_batches_are_bounded_by_texts_and_padded_tokens(lengths, batch_size):
    # The model's activations grow with texts × tokens²: a batch of 32 texts of 256 tokens
    # took a worker past 1 GiB. Every text is in exactly one batch, in the given order.
    order = np.argsort(lengths, kind="stable")
    batches = [list(b) for b in _batches(order, lengths, batch_size)]
    assert [i for b in batches for i in b] == list(order)
    for batch in batches:
        assert 1 <= len(batch) <= batch_size
        longest = max(lengths[i] for i in batch)
        assert len(batch) == 1 or len(batch) * longest <= BATCH_TOKENS
