"""Token counts with a real tokenizer: the WordPiece tokenizer of all-MiniLM-L6-v2.

It ships with the embedding model (no download), runs in Rust on batches, and is the one
that decides how much of a text the embedding model reads. For LLM prompt budgets it is an
approximation (BPE tokenizers of GPT/Claude models count English within about ±15% of it).
"""

from __future__ import annotations

from functools import lru_cache

from sessions.embedding.model_files import tokenizer_file


@lru_cache(maxsize=1)
def tokenizer():
    from tokenizers import Tokenizer

    loaded = Tokenizer.from_file(str(tokenizer_file()))
    loaded.no_truncation()
    loaded.no_padding()
    return loaded


# Very long texts are counted by pieces so one huge message cannot stall a request.
_PIECE = 100_000


def count_tokens(texts: list[str]) -> list[int]:
    """Tokens of each text (no special tokens), in one batched call."""
    if not texts:
        return []
    pieces: list[str] = []
    owners: list[int] = []
    for i, text in enumerate(texts):
        for start in range(0, max(len(text), 1), _PIECE):
            pieces.append(text[start : start + _PIECE])
            owners.append(i)
    counts = [0] * len(texts)
    for owner, encoding in zip(
        owners, tokenizer().encode_batch(pieces, add_special_tokens=False), strict=True
    ):
        counts[owner] += len(encoding.ids)
    return counts
