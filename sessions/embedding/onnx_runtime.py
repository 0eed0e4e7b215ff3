"""The embedding model on ONNX Runtime: batches of documents and single queries.

The ONNX graph is exported from the packaged weights (``sessions/embedding/torch_runtime.py``)
on first use, into ``settings.MODEL_CACHE_DIR``; its int8 variant is derived from it by
ONNX Runtime's dynamic quantisation (weights stored as int8, activations quantised on the
fly). Each graph is written aside and renamed (a concurrent process never reads half a
file), checked against torch on probe texts when it is made, and reused by every process
after; a graph that cannot be made or disagrees is deleted and its callers stay on torch,
with a warning (``sessions/embedding/backend.py``).

A batch is tokenised once (the model's Rust tokenizer, truncated at the model's length),
sorted by length, cut into batches padded to their longest text, and pooled as
sentence-transformers' mean pooling is: the mean of the tokens under the attention mask.
``bench/embedding_backends.py`` measures the variants against torch.
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
from sessions.embedding.torch_runtime import embed as embed_by_torch
from sessions.embedding.torch_runtime import get_model

logger = logging.getLogger(__name__)

INPUTS = ("input_ids", "attention_mask", "token_type_ids")
VARIANTS = ("fp32", "int8")
PROBES = (
    "hi",
    "How did we handle auth in the login service?",
    "Квартира в Москве и 東京の天気 " * 8,
    "def refresh_token(user):\n    return jwt.encode({'sub': user.id}, KEY)",
    "word " * 400,  # past the model's 256 word pieces: truncated the same way
)
# Lowest cosine to torch's vector of a probe, to catch a broken graph: fp32 differs by float
# rounding only; int8 rounds every weight (its probes measure 0.976-0.996). Whether int8 is
# close enough to serve by default is the benchmark's call, not this check's.
MIN_PROBE_COSINE = {"fp32": 0.9999, "int8": 0.97}
BATCH_SIZE = 32
BATCH_TOKENS = 2048  # padded tokens per batch (texts × the longest text's tokens)
OPTIMIZATION_LEVELS = ("disable", "basic", "extended", "all")
_derive_lock = threading.Lock()


class OnnxEncoder:
    """One ONNX Runtime session and the model's tokenizer; thread-safe (ORT sessions are).

    ``threads`` 0 is ONNX Runtime's default (one per physical core)."""

    def __init__(self, graph: Path, threads: int, optimization: str = "all") -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = getattr(
            onnxruntime.GraphOptimizationLevel, f"ORT_{_ORT_LEVELS[optimization]}"
        )
        self.session = onnxruntime.InferenceSession(
            str(graph), options, providers=["CPUExecutionProvider"]
        )
        self.tokenizer = Tokenizer.from_file(str(tokenizer_file()))
        self.tokenizer.no_padding()
        # Special tokens are added here, so the text itself gets the model's length less two.
        self.tokenizer.enable_truncation(max_sequence_length() - 2)
        self.cls = self.tokenizer.token_to_id("[CLS]")
        self.sep = self.tokenizer.token_to_id("[SEP]")

    def token_ids(self, texts: list[str]) -> list[list[int]]:
        """Each text's word pieces (no special tokens), truncated as the model reads them."""
        return [e.ids for e in self.tokenizer.encode_batch(texts, add_special_tokens=False)]

    def encode(self, text: str) -> np.ndarray:
        """One text's normalised float32 vector (a query)."""
        return self.encode_batch([text])[0]

    def encode_batch(
        self,
        texts: list[str],
        *,
        token_ids: list[list[int] | None] | None = None,
        batch_size: int = BATCH_SIZE,
    ) -> np.ndarray:
        """Normalised float32 vectors, one row per text. ``token_ids[i]``, when given, are
        text i's word pieces already made by this tokenizer (the chunker's): the text is
        then not tokenised again."""
        ids = list(token_ids) if token_ids is not None else [None] * len(texts)
        missing = [i for i, known in enumerate(ids) if known is None]
        for i, made in zip(missing, self.token_ids([texts[i] for i in missing]), strict=True):
            ids[i] = made
        limit = max_sequence_length() - 2
        ids = [[self.cls, *pieces[:limit], self.sep] for pieces in ids]
        vectors = np.zeros((len(ids), settings.EMBEDDING_DIMENSIONS), dtype=np.float32)
        # Sorted by length, each batch is padded only to the few tokens its longest text has.
        order = np.argsort([len(pieces) for pieces in ids], kind="stable")
        for chosen in _batches(order, [len(pieces) for pieces in ids], batch_size):
            vectors[chosen] = self._run([ids[i] for i in chosen])
        return vectors

    def _run(self, batch: list[list[int]]) -> np.ndarray:
        width = max(len(pieces) for pieces in batch)
        input_ids = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for row, pieces in enumerate(batch):
            input_ids[row, : len(pieces)] = pieces
            mask[row, : len(pieces)] = 1
        feed = dict(zip(INPUTS, (input_ids, mask, np.zeros_like(input_ids)), strict=True))
        hidden = self.session.run(None, feed)[0]
        # sentence-transformers' mean pooling, then its L2 normalisation (same epsilons).
        weights = mask.astype(np.float32)
        summed = np.einsum("btd,bt->bd", hidden, weights)
        pooled = summed / np.maximum(weights.sum(axis=1, keepdims=True), 1e-9)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)


def _batches(order, lengths: list[int], batch_size: int):
    """``order`` (shortest first) cut into batches of at most ``batch_size`` texts and at
    most ``BATCH_TOKENS`` padded tokens: the model's activations grow with texts × tokens²,
    so 32 texts of 256 tokens took a worker past 1 GiB, while 32 short ones need little."""
    start = 0
    while start < len(order):
        end = start + 1
        while (
            end < len(order)
            and end - start < batch_size
            and (end - start + 1) * lengths[order[end]] <= BATCH_TOKENS
        ):
            end += 1
        yield order[start:end]
        start = end


_ORT_LEVELS = {
    "disable": "DISABLE_ALL",
    "basic": "ENABLE_BASIC",
    "extended": "ENABLE_EXTENDED",
    "all": "ENABLE_ALL",
}


@lru_cache(maxsize=4)
def onnx_encoder(variant: str, threads: int) -> OnnxEncoder | None:
    """The process's encoder of ``variant`` ("fp32" or "int8") with ``threads`` threads,
    its graph made and checked first if need be; None when it cannot serve."""
    try:
        path = onnx_graph_path(variant)
        if not path.exists():
            with _derive_lock:
                if not path.exists():
                    _derive(variant, path)
                    encoder = OnnxEncoder(path, threads)
                    if not agrees_with_torch(encoder, MIN_PROBE_COSINE[variant]):
                        path.unlink(missing_ok=True)
                        raise RuntimeError(f"the {variant} graph's vectors differ from torch's")
                    return encoder
        return OnnxEncoder(path, threads)
    except Exception as error:  # any failure: slower embedding, never failed embedding
        logger.warning("ONNX %s embedding unavailable, torch serves instead: %s", variant, error)
        return None


def _derive(variant: str, path: Path) -> None:
    if variant == "fp32":
        export(path)
    elif variant == "int8":
        fp32 = onnx_graph_path("fp32")
        if not fp32.exists():
            export(fp32)
        quantize(fp32, path)
    else:
        raise ValueError(f"no ONNX variant {variant!r}")


def _written_aside(path: Path):
    """A temporary name beside ``path``: the caller writes it, then renames it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return path.with_name(f"{path.name}.{os.getpid()}.partial")


def export(path: Path) -> None:
    """Trace the packaged model to ONNX at ``path``."""
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
    partial = _written_aside(path)
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


def quantize(fp32: Path, path: Path) -> None:
    """The int8 graph of ``fp32`` at ``path``: ONNX Runtime's dynamic quantisation of the
    weights of its matrix products (the attention and feed-forward layers). Per channel:
    each output column keeps its own scale; reduced range (7 bits): CPUs without VNNI
    saturate the u8×s8 products of full-range weights, which costs most of the agreement."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    started = time.perf_counter()
    partial = _written_aside(path)
    try:
        quantize_dynamic(
            fp32,
            partial,
            weight_type=QuantType.QInt8,
            op_types_to_quantize=["MatMul"],
            per_channel=True,
            reduce_range=True,
        )
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    logger.info("quantised %s to int8 at %s in %.1f s", fp32, path, time.perf_counter() - started)


def agrees_with_torch(encoder: OnnxEncoder, minimum: float) -> bool:
    """Each probe's vector, alone and within the batch of all probes (padded beside longer
    ones), is within ``minimum`` cosine of torch's."""
    expected = embed_by_torch(list(PROBES))
    batched = encoder.encode_batch(list(PROBES))
    return all(
        float(encoder.encode(text) @ vector) >= minimum and float(together @ vector) >= minimum
        for text, vector, together in zip(PROBES, expected, batched, strict=True)
    )
