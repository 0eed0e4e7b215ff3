"""Which runtime embeds documents and queries: ``settings.EMBEDDING_BACKEND``.

- ``torch``: sentence-transformers on torch (CPU or CUDA, ``EMBEDDING_DEVICE``);
- ``onnx``: the same weights on ONNX Runtime, fp32: torch's vectors to float rounding;
- ``onnx-int8``: ONNX Runtime on the dynamically quantised graph;
- ``auto``: torch when it runs on CUDA, else ``CPU_DEFAULT``, the fastest on CPU of those
  whose vectors and recall match torch's (``bench/embedding_backends.py``; the figures are
  in docs/benchmarks.md).

Documents (the pipeline, session summaries) and queries are embedded in the same vector
space: queries use the documents' ONNX graph when there is one; when documents are on
torch, queries use the fp32 graph, which gives torch's vectors to float rounding. A graph
that cannot be made leaves its callers on torch, with a warning, never without vectors.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
from django.conf import settings

from sessions.embedding.onnx_runtime import OnnxEncoder, onnx_encoder
from sessions.embedding.torch_runtime import embed as embed_by_torch

BACKENDS = ("auto", "torch", "onnx", "onnx-int8")
CPU_DEFAULT = "onnx"
VARIANT_OF = {"onnx": "fp32", "onnx-int8": "int8"}
# Where the NVIDIA driver shows itself: without it torch has no CUDA, so a CPU machine
# learns that without importing torch (~190 MB per process that would otherwise not load it).
NVIDIA_DRIVER = (Path("/proc/driver/nvidia/version"), Path("/dev/nvidiactl"))


def resolved_backend() -> str:
    """``torch``, ``onnx`` or ``onnx-int8``: what ``auto`` means on this machine."""
    wanted = settings.EMBEDDING_BACKEND
    if wanted != "auto":
        return wanted
    return "torch" if _on_cuda() else CPU_DEFAULT


def _on_cuda() -> bool:
    device = (settings.EMBEDDING_DEVICE or "auto").lower()
    if device != "auto":
        return device.startswith("cuda")
    if not any(path.exists() for path in NVIDIA_DRIVER):
        return False
    import torch

    return torch.cuda.is_available()


@lru_cache(maxsize=1)
def document_encoder() -> OnnxEncoder | None:
    """The ONNX encoder documents use, or None: torch embeds them."""
    variant = VARIANT_OF.get(resolved_backend())
    return onnx_encoder(variant, settings.EMBEDDING_THREADS) if variant else None


def embed(texts: list[str], *, token_ids: list[list[int] | None] | None = None) -> np.ndarray:
    """Normalised float32 vectors of documents, one row per text. ``token_ids[i]``: text
    i's word pieces when the caller already has them (``sessions/enrich/chunking.py``)."""
    if not texts:
        return np.zeros((0, settings.EMBEDDING_DIMENSIONS), dtype=np.float32)
    encoder = document_encoder()
    if encoder is None:
        return embed_by_torch(texts)
    return encoder.encode_batch(texts, token_ids=token_ids)
