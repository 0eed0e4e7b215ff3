"""A search query's vector, by the fastest runtime this process has."""

from __future__ import annotations

import numpy as np

from sessions.embedding.onnx_runtime import query_encoder
from sessions.embedding.torch_runtime import embed


def embed_query(text: str) -> np.ndarray:
    """ONNX Runtime when it can serve (``onnx_runtime``), else torch. The same vector either
    way, to float rounding."""
    encoder = query_encoder()
    if encoder is None:
        return embed([text])[0]
    return encoder.encode(text)
