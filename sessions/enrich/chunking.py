"""Splitting messages into the pieces that get a vector each.

all-MiniLM-L6-v2 reads at most 256 word pieces (with [CLS]/[SEP]); anything past that is
silently ignored. So a message longer than ``CHUNK_TOKENS`` word pieces is cut into windows
of that size overlapping by ``OVERLAP_TOKENS``, on the tokenizer's own offsets, so that
every part of it is searchable and no sentence is lost at a boundary. Tool calls and tool
outputs are chunked like any other message.

What is embedded for a chunk is its text with a short header (who spoke), because "who
said it" is part of what a searcher means.

A short message is embedded with the turn it follows (``context``): "Yes, every weekend!"
means what it answers, and alone its vector is mostly its speaker's name, which puts it near
every question naming that person. So a message under ``CONTEXT_UNDER_TOKENS`` word pieces
gets, instead of its plain chunk, one chunk whose embedded text is the previous message's last
``CONTEXT_TOKENS`` word pieces (with its header), a new line, then the message with its own
header: "Mel: Do you like hiking?\nCaroline: Yes, every weekend!". Instead of, not beside: an
added chunk leaves the plain vector's false matches in place (docs/benchmark-log.md, "Contextual
vectors", has the variants measured). The previous turn only: it exists when the message is
embedded, so no message waits for or is embedded again on its neighbour's arrival. Only
what people and agents say to each other (user and assistant prose) takes a context, and only
from prose: a tool call or output ("Error: not enough seats on flight HAT229") means what it
says, and as context it lent its match to the short reply after it, which ranking then put
first as prose.

Every chunk's text is what precedes its span (a header, and for a context chunk the previous
turn) followed by the span itself, so ``text`` ends with ``content[char_start:char_end]``:
snippets take that end (``search/snippets.py``) and never show the context.

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
# A message under this many word pieces is embedded with the turn before it (tuned on LoCoMo
# conversations 0-4 among 16, 32 and 64), of which the last CONTEXT_TOKENS pieces are kept.
CONTEXT_UNDER_TOKENS = 32
CONTEXT_TOKENS = 96


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


def takes_context(role: str, tool_name: str = "") -> bool:
    """Whether a message of this role is embedded after the previous turn when short, and
    whether it is a previous turn that a short message is embedded after."""
    return role in ("user", "assistant") and not tool_name


def context_for(content: str, *, header: str = "") -> str:
    """What a short message that follows ``content`` is embedded after: the end of
    ``content`` (its last ``CONTEXT_TOKENS`` word pieces, from a word's start) with its
    header and a new line; "" when it has no words."""
    if not content.strip():
        return ""
    encoding = tokenizer().encode(content, add_special_tokens=False)
    first = max(len(encoding.ids) - CONTEXT_TOKENS, 0)
    # Start at a whole word: a continuation piece ("##ing") cut from its word means nothing.
    while first < len(encoding.ids) and encoding.tokens[first].startswith("##"):
        first += 1
    if first == len(encoding.ids):
        return ""
    return f"{header}{content[encoding.offsets[first][0] :].strip()}\n"


@lru_cache(maxsize=1024)
def _context_ids(context: str) -> tuple[int, ...]:
    # Cached: a batch holds the turns in order, so each context is the one just made.
    return tuple(tokenizer().encode(context, add_special_tokens=False).ids)


def chunk_message(content: str, *, header: str = "", context: str = "") -> list[Chunk]:
    """Chunks of ``content``; [] when there is nothing to embed. ``context``
    (``context_for`` the previous message) goes before a message under
    ``CONTEXT_UNDER_TOKENS`` word pieces."""
    if not content.strip():
        return []
    encoding = tokenizer().encode(content, add_special_tokens=False)
    ids, offsets = encoding.ids, encoding.offsets
    head = _header_ids(header) if header else ()
    if context and len(ids) < CONTEXT_UNDER_TOKENS and len(content) <= MAX_CHUNK_CHARS:
        pieces = (*_context_ids(context), *head, *ids)
        return [Chunk(0, 0, len(content), context + header + content, pieces)]
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
