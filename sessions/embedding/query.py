"""A search query's vector, in the same space as the stored documents' vectors
(``sessions/embedding/backend.py``)."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from django.conf import settings

from sessions.embedding.backend import VARIANT_OF, document_encoder, resolved_backend
from sessions.embedding.onnx_runtime import OnnxEncoder, onnx_encoder
from sessions.embedding.torch_runtime import embed as embed_by_torch


@lru_cache(maxsize=1)
def query_encoder() -> OnnxEncoder | None:
    """The encoder of one query at a time, with at least one thread (a web process sets
    none): the documents' graph, or the fp32 one when documents are on torch (the same
    vectors to float rounding). None: torch embeds queries (the documents' graph could not
    be made, so they are on torch too). Chosen from the setting alone: a web process never
    loads the documents' encoder only to ask which graph it uses."""
    variant = VARIANT_OF.get(resolved_backend(), "fp32")
    return onnx_encoder(variant, settings.EMBEDDING_THREADS or 1)


def embed_query(text: str) -> np.ndarray:
    encoder = query_encoder()
    if encoder is None:
        return embed_by_torch([text])[0]
    return encoder.encode(text)


def embed_queries(texts: list[str]) -> np.ndarray:
    """Several texts in the query space in one run (memories rewritten together): the same
    vectors as ``embed_query`` one by one, to float rounding."""
    encoder = query_encoder()
    if encoder is None:
        return embed_by_torch(texts)
    return encoder.encode_batch(texts)


def clear_caches() -> None:
    """Forget the process's encoders, documents' and queries' (tests; a changed setting).
    Here, above both: ``backend`` must not import this module (an import cycle)."""
    for cached in (onnx_encoder, document_encoder, query_encoder):
        cached.cache_clear()
