"""The query encoder: the embedding model run by ONNX Runtime, for one text at a time.

A search embeds one short query per request, on the request's critical path, and ONNX
Runtime runs the same weights faster than torch on one text at one thread
(``bench/query_embedding.py`` measures both). Batches (the pipeline) stay on torch.

The ONNX graph is exported from the packaged weights
(``sessions/embedding/torch_runtime.py``) on first
use, into ``settings.MODEL_CACHE_DIR``, checked against torch on probe texts, and reused by
every process after; an export that fails or disagrees leaves queries on torch, with a
warning. The graph is traced on one unpadded sequence and is only ever fed one text (a
query is one text), so no padding mask is needed: pooling is the plain mean of the tokens,
as sentence-transformers' mean pooling is for an unpadded text.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import warnings
from functools import lru_cache
from pathlib import Path

import numpy as np
from django.conf import settings

from sessions.embedding.model_files import max_sequence_length, onnx_graph_path, tokenizer_file
from sessions.embedding.torch_runtime import embed, get_model

logger = logging.getLogger(__name__)

INPUTS = ("input_ids", "attention_mask", "token_type_ids")
PROBES = (
    "hi",
    "How did we handle auth in the login service?",
    "Квартира в Москве и 東京の天気 " * 8,
    "word " * 400,  # past the model's 256 word pieces: truncated the same way
)
MIN_PROBE_COSINE = 0.9999
_export_lock = threading.Lock()


class QueryEncoder:
    """One ONNX Runtime session and the model's tokenizer; thread-safe (ORT sessions are)."""

    def __init__(self, graph: Path, threads: int) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self.session = onnxruntime.InferenceSession(
            str(graph), options, providers=["CPUExecutionProvider"]
        )
        self.tokenizer = Tokenizer.from_file(str(tokenizer_file()))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_sequence_length())

    def encode(self, text: str) -> np.ndarray:
        """The text's normalised float32 vector."""
        ids = np.asarray([self.tokenizer.encode(text).ids], dtype=np.int64)
        feed = dict(zip(INPUTS, (ids, np.ones_like(ids), np.zeros_like(ids)), strict=True))
        hidden = self.session.run(None, feed)[0][0]
        vector = hidden.mean(axis=0)
        return (vector / np.linalg.norm(vector)).astype(np.float32)


@lru_cache(maxsize=1)
def query_encoder() -> QueryEncoder | None:
    """The process's encoder, or None when ONNX Runtime cannot serve (queries use torch)."""
    try:
        path = onnx_graph_path()
        threads = settings.EMBEDDING_THREADS or 1
        if not path.exists():
            with _export_lock:
                if not path.exists():
                    export(path)
                    encoder = QueryEncoder(path, threads)
                    if not _agrees_with_torch(encoder):
                        path.unlink(missing_ok=True)
                        raise RuntimeError("the exported graph's vectors differ from torch's")
                    return encoder
        return QueryEncoder(path, threads)
    except Exception as error:  # any failure: slower queries, never failed ones
        logger.warning("query embedding stays on torch: %s", error)
        return None


def export(path: Path) -> None:
    """Trace the packaged model to ONNX at ``path`` (written aside, then renamed: a
    concurrent process never reads half a file)."""
    import torch

    started = time.perf_counter()
    transformer = get_model()[0].auto_model.eval()

    class LastHiddenState(torch.nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    sample = torch.tensor([[101, 7592, 102]])
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    dynamic = {name: {0: "batch", 1: "tokens"} for name in (*INPUTS, "last_hidden_state")}
    try:
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")  # tracer notes about the one-sequence trace
            torch.onnx.export(
                LastHiddenState(transformer),
                (sample, torch.ones_like(sample), torch.zeros_like(sample)),
                str(partial),
                input_names=list(INPUTS),
                output_names=["last_hidden_state"],
                dynamic_axes=dynamic,
                opset_version=17,
                dynamo=False,
            )
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    logger.info(
        "exported %s to ONNX at %s in %.1f s",
        settings.EMBEDDING_MODEL,
        path,
        time.perf_counter() - started,
    )


def _agrees_with_torch(encoder: QueryEncoder) -> bool:
    expected = embed(list(PROBES))
    return all(
        float(encoder.encode(text) @ vector) >= MIN_PROBE_COSINE
        for text, vector in zip(PROBES, expected, strict=True)
    )
