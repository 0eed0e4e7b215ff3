"""Reading a chat-completions reply into the agreed memories JSON, and checking a quote.

Local servers answer the same OpenAI shape with different habits: Ollama, vLLM and
llama.cpp's server all put the model's text in ``choices[0].message.content``, but a model
may still wrap its JSON in a ```json fence, open with a line of prose ("Here are the
memories:"), or, when the server runs no reasoning parser, begin with a ``<think>`` block.
Those wrappings are removed because they cannot change what the JSON says. Everything that
could (an answer cut off at the token limit, a type we do not know, a missing field) is an
``LLMExtractionError``: the step falls back to the offline rules rather than guess.
"""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema

from memories.models import MemoryType

EXTRACTED_TYPES = [t for t in MemoryType.values if t != MemoryType.AGENT_STATE]

ANSWER_SCHEMA = {
    "type": "object",
    "required": ["memories"],
    "properties": {
        "memories": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["type", "content", "message"],
                "properties": {
                    "type": {"enum": EXTRACTED_TYPES},
                    "content": {"type": "string", "minLength": 1, "maxLength": 2000},
                    "message": {"type": "integer"},
                    "quote": {"type": "string"},
                    "topic": {"type": "string", "maxLength": 100},
                    "confidence": {"type": "string", "maxLength": 12},
                    "severity": {"enum": ["", "critical", "important", "minor"]},
                    "details": {"type": "object"},
                },
            },
        }
    },
}

THINK = re.compile(r"<think>.*?</think>", re.S | re.I)
FENCED = re.compile(r"```(?:json)?\s*(.*?)```", re.S | re.I)
# "3" and "[3]": the transcript writes numbers in brackets, and some models echo them
NUMBER = re.compile(r"\s*\[?\s*(\d+)\s*\]?\s*")
REASON_CHARS = 200


class LLMExtractionError(RuntimeError):
    """The endpoint gave no usable answer; the message says why."""


def answer_of(reply: Any) -> dict:
    """The memories JSON of a chat-completions ``reply`` (already decoded from JSON)."""
    if not isinstance(reply, dict) or not isinstance(reply.get("choices"), list):
        raise LLMExtractionError("answered no chat completion (no 'choices')")
    if not reply["choices"]:
        raise LLMExtractionError("answered no choices")
    choice = reply["choices"][0] if isinstance(reply["choices"][0], dict) else {}
    if choice.get("finish_reason") == "length":
        # the JSON is cut off; what parses of it would be a guess at the rest
        raise LLMExtractionError("answer cut off at the token limit (finish_reason 'length')")
    text = (choice.get("message") or {}).get("content")
    if not isinstance(text, str) or not text.strip():
        raise LLMExtractionError("answered an empty message")
    answer = _json_in(text)
    _coerce(answer)
    try:
        jsonschema.validate(answer, ANSWER_SCHEMA)
    except jsonschema.ValidationError as exc:
        raise LLMExtractionError(f"answered memories of the wrong shape: {exc.message}") from exc
    return answer


def _json_in(text: str) -> dict:
    """The first JSON object holding ``memories`` in ``text``, past any think block, fence
    or prose around it."""
    text = THINK.sub("", text)
    if re.search(r"<think>", text, re.I):
        raise LLMExtractionError("answered an unfinished <think> block and no JSON")
    fenced = FENCED.search(text)
    if fenced:
        text = fenced.group(1)
    decoder = json.JSONDecoder()
    for start in [m.start() for m in re.finditer(r"\{", text)]:
        try:
            found, _ = decoder.raw_decode(text, start)
        except ValueError:
            continue
        if isinstance(found, dict) and "memories" in found:
            return found
    raise LLMExtractionError(f"answered no JSON memories: {_excerpt(text)!r}")


def _coerce(answer: dict) -> None:
    """Only what cannot change the meaning: a message number written as a string, a type
    in capitals."""
    for item in answer.get("memories") or []:
        if not isinstance(item, dict):
            continue
        number = item.get("message")
        if isinstance(number, str) and NUMBER.fullmatch(number):
            item["message"] = int(NUMBER.fullmatch(number).group(1))
        if isinstance(item.get("type"), str):
            item["type"] = item["type"].strip().lower()


def verbatim(quote: str, text: str) -> str:
    """``quote`` as ``text`` writes it, or "" when ``text`` does not contain it.

    Case, runs of whitespace, typographic quotes, quote marks around it and a final full
    stop may differ (models retype them); the stored quote is always the message's own
    characters, with the sentence's full stop, so evidence never shows words the message
    did not say.
    """
    words = _plain(quote).strip().strip("'\"").rstrip(".").split()
    if not words:
        return ""
    pattern = r"\s+".join(re.escape(w) for w in words) + r"\.?"
    found = re.search(pattern, _plain(text), re.I)
    # _plain keeps every character's position, so the span indexes the original text
    return text[found.start() : found.end()] if found else ""


def _plain(text: str) -> str:
    return text.translate(str.maketrans("\u2018\u2019\u201c\u201d", "''\"\""))


def _excerpt(text: str) -> str:
    text = " ".join(text.split())
    return text[:REASON_CHARS] + ("…" if len(text) > REASON_CHARS else "")
