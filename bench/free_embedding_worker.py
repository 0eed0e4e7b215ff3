"""A Celery worker whose embedding model costs nothing, for ``bench/scale_out.py`` only.

Everything else is the real worker: the same tasks, claims, chunking, row writes and
commits against the same PostgreSQL. Only the model call returns vectors from a pool of
real embeddings (``FREE_EMBEDDING_POOL``, an ``.npy`` file), slightly perturbed, so the
HNSW index takes inserts shaped like real ones. With the model out of the way, what such
workers reach is what PostgreSQL (and the pipeline's own Python) can absorb.

    python bench/free_embedding_worker.py --hostname free1@%h
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryapp.settings")

import django
import numpy as np

django.setup()

from memoryapp.celery import app  # noqa: E402 (after django.setup())
from sessions.enrich import pipeline  # noqa: E402

POOL = np.load(os.environ["FREE_EMBEDDING_POOL"])
_rng = np.random.default_rng(int.from_bytes(os.urandom(4), "little"))


def free_embed(texts: list[str], **_options) -> np.ndarray:
    picked = POOL[_rng.integers(0, len(POOL), size=len(texts))]
    vectors = picked + _rng.normal(0.0, 0.02, size=picked.shape).astype(np.float32)
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


pipeline.embed = free_embed

if __name__ == "__main__":
    app.worker_main(
        [
            "worker",
            "--concurrency",
            "1",
            "--loglevel",
            "WARNING",
            "--without-gossip",
            "--without-mingle",
            *sys.argv[1:],
        ]
    )
