"""The optional LLM extractor: memories from an OpenAI-compatible chat-completions endpoint.

The session's new messages go out numbered, in windows of ``WINDOW_CHARS``; the answer must
be JSON (``ANSWER_SCHEMA``) naming, for each memory, the number of the message it comes
from. Anything else (no answer in time, an HTTP error, bad JSON, a memory that points at no
message) is an ``LLMExtractionError``: the caller falls back to the offline rules.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

import jsonschema

from memories.capture.record import Evidence, MemoryDraft
from memories.models import MemoryScope, MemoryType, Origin
from sessions.enrich.text import FENCE
from sessions.enrich.transcript import attr, is_injected

WINDOW_CHARS = 16_000
MESSAGE_CHARS = 2_000
TIMEOUT_SECONDS = 60
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

SYSTEM_PROMPT = (
    "You extract a team's long-term memory from a transcript. Each line starts with a "
    "message number in brackets. Return only what the transcript states, never guesses, "
    "questions, plans under consideration or dead ends without a reason. Types: decision "
    "(a choice made; details.rationale, details.alternatives_considered), finding (a bug, "
    "a root cause; severity critical|important|minor; details.category, details.root_cause), "
    "preference (what the user wants done a certain way; confidence explicit or inferred; a "
    "topic key such as 'commit_style' so a later change replaces it), learning (something "
    "found out worth knowing next time), fact (a person's own fact in a conversation between "
    "people; topic '<speaker>:<attribute>' when it holds one value at a time). Answer with "
    'JSON only: {"memories": [{"type": ..., "content": one self-contained sentence naming '
    'who, "message": the message number, "quote": the exact sentence, "topic": ..., '
    '"confidence": ..., "severity": ..., "details": {...}}]}. No memories: {"memories": []}.'
)


class LLMExtractionError(RuntimeError):
    """The endpoint gave no usable answer; the message says why."""


def extract(
    session: Any, messages: Sequence[Any], *, url: str, model: str, api_key: str
) -> list[MemoryDraft]:
    drafts: list[MemoryDraft] = []
    for window in windows(messages):
        answer = _ask(url, model, api_key, _transcript(window))
        drafts += [_draft(session, window, item) for item in answer["memories"]]
    return drafts


def windows(messages: Sequence[Any]) -> list[list[tuple[int, Any, str]]]:
    """``(number, message, text)`` of the readable messages, in windows of at most
    ``WINDOW_CHARS`` of text."""
    out: list[list[tuple[int, Any, str]]] = [[]]
    size = 0
    for number, message in enumerate(messages):
        if attr(message, "role") not in ("user", "assistant") or attr(message, "tool_name"):
            continue
        if is_injected(message):
            continue
        text = FENCE.sub("[code]", str(attr(message, "content") or "")).strip()[:MESSAGE_CHARS]
        if not text:
            continue
        if size + len(text) > WINDOW_CHARS and out[-1]:
            out.append([])
            size = 0
        out[-1].append((number, message, text))
        size += len(text)
    return [w for w in out if w]


def _transcript(window: list[tuple[int, Any, str]]) -> str:
    lines = []
    for number, message, text in window:
        author = str(attr(message, "author") or "")
        who = f"{attr(message, 'role')} ({author})" if author else attr(message, "role")
        lines.append(f"[{number}] {who}: {text}")
    return "\n".join(lines)


def _ask(url: str, model: str, api_key: str, transcript: str) -> dict:
    endpoint = url.rstrip("/") + "/chat/completions"
    body = {
        "model": model,
        "temperature": 0,
        "response_format": {"type": "json_object"},
        "messages": [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": transcript},
        ],
    }
    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    request = urllib.request.Request(endpoint, json.dumps(body).encode(), headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:
            reply = json.loads(response.read())
        text = reply["choices"][0]["message"]["content"]
        answer = json.loads(_unfenced(text))
        jsonschema.validate(answer, ANSWER_SCHEMA)
    except urllib.error.HTTPError as exc:
        raise LLMExtractionError(f"HTTP {exc.code} from {endpoint}") from exc
    except TimeoutError as exc:
        raise LLMExtractionError(f"no answer from {endpoint} in {TIMEOUT_SECONDS}s") from exc
    except OSError as exc:  # URLError and other connection failures
        raise LLMExtractionError(f"cannot reach {endpoint}: {getattr(exc, 'reason', exc)}") from exc
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise LLMExtractionError(f"{endpoint} answered no JSON memories: {exc}") from exc
    except jsonschema.ValidationError as exc:
        raise LLMExtractionError(
            f"{endpoint} answered memories of the wrong shape: {exc.message}"
        ) from exc
    return answer


def _unfenced(text: str) -> str:
    """The JSON inside a ```json fence, which some models add despite being asked not to."""
    fenced = re.search(r"```(?:json)?\s*(.*?)```", text, re.S)
    return fenced.group(1) if fenced else text


def _draft(session: Any, window: list[tuple[int, Any, str]], item: dict) -> MemoryDraft:
    by_number = {number: (message, text) for number, message, text in window}
    if item["message"] not in by_number:
        raise LLMExtractionError(f"a memory points at message {item['message']}, not sent")
    message, text = by_number[item["message"]]
    quote = str(item.get("quote") or "").strip()
    if quote.lower() not in text.lower():
        quote = ""  # a paraphrase is not a quote
    role = attr(message, "role")
    # who said it, as the offline rules name them (the person of a user's line)
    agent = str(attr(message, "author") or "") or (
        str(attr(session, "agent_name") or "")
        if role == "assistant"
        else str(attr(session, "user_name") or "") or "user"
    )
    return MemoryDraft(
        type=item["type"],
        content=item["content"].strip(),
        session=session,
        details=item.get("details") or {},
        topic=str(item.get("topic") or ""),
        confidence=str(item.get("confidence") or ""),
        severity=str(item.get("severity") or ""),
        agent=agent,
        scope=MemoryScope.PROJECT,
        origin=Origin.EXTRACTOR,
        extractor="llm",
        occurred_at=attr(message, "timestamp", None) or None,
        evidence=[Evidence(message, quote)],
    )
