"""Splitting messages into the pieces that get a vector each.

all-MiniLM-L6-v2 reads at most 256 word pieces (with [CLS]/[SEP]); anything past that is
silently ignored. So a message longer than ``CHUNK_TOKENS`` word pieces is cut into windows
of that size overlapping by ``OVERLAP_TOKENS``, on the tokenizer's own offsets, so that
every part of it is searchable and no sentence is lost at a boundary. Tool calls and tool
outputs are chunked like any other message.

What is embedded for a chunk is its text with a short header (who spoke), because "who
said it" is part of what a searcher means.

A chunk carries the word pieces of what is embedded (``token_ids``: the header's, then its
window of the message's), so the embedding model does not tokenise the text a second time
(``sessions/embedding/onnx_runtime.py``). The tokenizer splits at whitespace before it
splits words into pieces, so the pieces of "<header> <text>" are the header's followed by
the text's; a window's pieces are its slice of the message's pieces.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from sessions.embedding.tokens import tokenizer

CHUNK_TOKENS = 240  # leaves room for the header and special tokens inside 256
OVERLAP_TOKENS = 40
MAX_CHUNKS_PER_MESSAGE = 5000  # ~1M word pieces; beyond that a message is cut (and said so)
# The tokenizer makes one [UNK] of a "word" over 100 characters (base64, minified code), so
# a window of 240 tokens can span a huge stretch of text; such windows are cut by characters.
MAX_CHUNK_CHARS = 2000


@dataclass(frozen=True)
class Chunk:
    index: int
    char_start: int
    char_end: int
    text: str
    # The word pieces of ``text`` (no special tokens); None: the embedder tokenises it.
    token_ids: tuple[int, ...] | None = field(default=None, compare=False, repr=False)


def header_for(role: str, author: str = "", tool_name: str = "") -> str:
    who = author or role
    if tool_name:
        who = f"{who} ({tool_name})" if role != "tool" else f"{tool_name} output"
    return f"{who}: "


@lru_cache(maxsize=1024)
def _header_ids(header: str) -> tuple[int, ...]:
    return tuple(tokenizer().encode(header, add_special_tokens=False).ids)


def chunk_message(content: str, *, header: str = "") -> list[Chunk]:
    """Chunks of ``content``; [] when there is nothing to embed."""
    if not content.strip():
        return []
    encoding = tokenizer().encode(content, add_special_tokens=False)
    ids, offsets = encoding.ids, encoding.offsets
    head = _header_ids(header) if header else ()
    if len(offsets) <= CHUNK_TOKENS and len(content) <= MAX_CHUNK_CHARS:
        return [Chunk(0, 0, len(content), header + content, (*head, *ids))]
    spans: list[tuple[int, int, tuple[int, ...] | None]] = []
    step = CHUNK_TOKENS - OVERLAP_TOKENS
    for first in range(0, max(len(offsets), 1), step):
        last = min(first + CHUNK_TOKENS, len(offsets)) - 1
        start, end = offsets[first][0], offsets[last][1]
        if end - start <= MAX_CHUNK_CHARS:
            spans.append((start, end, (*head, *ids[first : last + 1])))
        else:  # cut by characters: which pieces fall in which cut is the embedder's to find
            spans += [
                (s, min(s + MAX_CHUNK_CHARS, end), None) for s in range(start, end, MAX_CHUNK_CHARS)
            ]
        if last == len(offsets) - 1:
            break
    return [
        Chunk(index, start, end, header + content[start:end], pieces)
        for index, (start, end, pieces) in enumerate(spans[:MAX_CHUNKS_PER_MESSAGE])
    ]
