"""The embedding model on torch (sentence-transformers): batches of documents.

Loaded lazily, once per process (a Celery worker process, a web worker answering queries),
never at import time. Device ``auto`` picks CUDA when present. Vectors are L2-normalised,
so cosine distance in pgvector is 1 - dot product.
"""

from __future__ import annotations

import logging
import threading
import time
from functools import lru_cache

import numpy as np
from django.conf import settings

from sessions.embedding.model_files import model_name, model_path

logger = logging.getLogger(__name__)

BATCH_SIZE = 64
_lock = threading.Lock()


def _device() -> str:
    wanted = (settings.EMBEDDING_DEVICE or "auto").lower()
    if wanted != "auto":
        return wanted
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


@lru_cache(maxsize=1)
def get_model():
    import torch
    from sentence_transformers import SentenceTransformer

    if settings.EMBEDDING_THREADS:
        torch.set_num_threads(settings.EMBEDDING_THREADS)
    started = time.perf_counter()
    device = _device()
    model = SentenceTransformer(str(model_path()), device=device)
    logger.info(
        "loaded %s on %s (%d torch threads) in %.1f s",
        model_name(),
        device,
        torch.get_num_threads(),
        time.perf_counter() - started,
    )
    return model


def embed(texts: list[str], *, batch_size: int = BATCH_SIZE) -> np.ndarray:
    """Normalised float32 vectors, one row per text (sentence-transformers sorts by length)."""
    if not texts:
        return np.zeros((0, settings.EMBEDDING_DIMENSIONS), dtype=np.float32)
    model = get_model()
    with _lock:  # one encode at a time per process: torch already uses every thread it has
        vectors = model.encode(
            texts,
            batch_size=batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
    return vectors.astype(np.float32, copy=False)
