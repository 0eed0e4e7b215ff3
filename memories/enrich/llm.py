"""The optional LLM extractor: memories from an OpenAI-compatible chat-completions endpoint.

The session's new messages go out numbered, in windows of ``WINDOW_CHARS``; the answer must
be JSON (``llm_answer.ANSWER_SCHEMA``) naming, for each memory, the number of the message it
comes from and a verbatim quote of it. Anything else (no answer in time, an HTTP error, no
such JSON, a memory that points at a message it was not sent) is an ``LLMExtractionError``:
the caller falls back to the offline rules and records why.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

from memories.capture.record import Evidence, MemoryDraft
from memories.enrich.llm_answer import LLMExtractionError, answer_of, verbatim
from memories.models import MemoryScope, Origin
from sessions.enrich.text import FENCE
from sessions.enrich.transcript import attr, is_injected

WINDOW_CHARS = 16_000
MESSAGE_CHARS = 2_000
TIMEOUT_SECONDS = 60  # per window; settings.MEMORY_LLM_TIMEOUT_SECONDS overrides it
ERROR_BODY_CHARS = 200
SHOWN_NUMBERS = 12  # of the numbers sent, in the reason of a memory citing another

__all__ = ["LLMExtractionError", "extract", "windows"]

# The labelling rules of the memory_dev set (what a careful teammate would write down), so
# the model is asked for the same types, and the same exclusions, the offline rules and
# the bench use.
SYSTEM_PROMPT = (
    "You extract a team's long-term memory from a transcript of an agent's work session: "
    "what a teammate, or the same agent, would want to know in a later session. Each line "
    "starts with a message number in brackets, then who wrote it. Types:\n"
    "- decision: something decided for the project, a choice made (not one still being "
    "considered); details.rationale when a reason is stated, "
    "details.alternatives_considered for a rejected alternative.\n"
    "- finding: a discovered fact about the code or system: a bug and its root cause, a "
    "failing test's cause, a review finding, a security or performance issue; severity "
    "critical|important|minor; details.root_cause when stated.\n"
    "- preference: a standing instruction from the user about how to work ('never use X', "
    "'always run the tests', 'answer briefly'), not a one-off request; confidence explicit "
    "or inferred; a topic key such as 'commit_style' so a later change replaces it.\n"
    "- learning: a lesson or non-obvious fact learned while working ('turns out X needs "
    "Y', 'the fix was Z').\n"
    "- fact: only in a conversation between people: what a speaker says about their own "
    "life; topic '<speaker>:<attribute>' when it holds one value at a time.\n"
    "Not memories: narration ('Now let me read the file'), one-off requests, questions, "
    "plans not carried out, pleasantries, tool output, generic advice, claims corrected "
    "later in the same transcript. A decision names what was decided: resolve 'that' or "
    "'your suggestion' from the transcript, or leave it out. Return only what the "
    "transcript states, never guesses.\n"
    "Answer with JSON only, no prose: "
    '{"memories": [{"type": ..., "content": one self-contained sentence naming who, '
    '"message": the number in brackets of the message it comes from (an integer), '
    '"quote": the sentence that states it, copied character for character from that '
    'message, "topic": ..., "confidence": ..., "severity": ..., "details": {...}}]}. '
    'No memories: {"memories": []}.'
)


def extract(
    session: Any,
    messages: Sequence[Any],
    *,
    url: str,
    model: str,
    api_key: str,
    timeout: float | None = None,
) -> list[MemoryDraft]:
    """Every window's memories, or ``LLMExtractionError`` for the whole step: a window
    whose answer cannot be trusted discards the others, so a step is one method, never a
    mix of the model's and the rules' memories."""
    drafts: list[MemoryDraft] = []
    for window in windows(messages):
        answer = _ask(url, model, api_key, _transcript(window), timeout or TIMEOUT_SECONDS)
        drafts += _drafts(session, window, answer["memories"])
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


def _ask(url: str, model: str, api_key: str, transcript: str, timeout: float) -> dict:
    endpoint = url.rstrip("/") + "/chat/completions"
    body = {
        "model": model,
        "temperature": 0,
        # JSON mode: Ollama, vLLM and llama.cpp's server all accept it; a server that
        # ignores it still gets a prompt that asks for JSON only
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
        with urllib.request.urlopen(request, timeout=timeout) as response:
            reply = json.loads(response.read())
    except urllib.error.HTTPError as exc:
        raise LLMExtractionError(f"HTTP {exc.code} from {endpoint}{_said(exc)}") from exc
    except TimeoutError as exc:
        raise LLMExtractionError(f"no answer from {endpoint} in {timeout:g}s") from exc
    except OSError as exc:  # URLError and other connection failures
        raise LLMExtractionError(f"cannot reach {endpoint}: {getattr(exc, 'reason', exc)}") from exc
    except ValueError as exc:
        raise LLMExtractionError(f"{endpoint} answered no JSON memories: {exc}") from exc
    try:
        return answer_of(reply)
    except LLMExtractionError as exc:
        raise LLMExtractionError(f"{endpoint} {exc}") from exc


def _said(error: urllib.error.HTTPError) -> str:
    """The server's own words: llama.cpp, vLLM and Ollama put them in ``error.message``
    (or ``error`` as a string), and "model not found" is worth reading in the reason."""
    try:
        said = json.loads(error.read() or b"{}").get("error")
    except (ValueError, AttributeError, OSError):
        return ""
    message = said.get("message") if isinstance(said, dict) else said
    return f": {str(message)[:ERROR_BODY_CHARS]}" if message else ""


def _drafts(session: Any, window: list[tuple[int, Any, str]], items: list[dict]) -> list:
    sent = {number for number, _, _ in window}
    unsent = sorted({item["message"] for item in items} - sent)
    if unsent:
        # A number it was not sent means the model lost track of the transcript: none of
        # its evidence in this answer can be trusted, so the whole step falls back.
        numbers = sorted(sent)
        shown = ", ".join(map(str, numbers[:SHOWN_NUMBERS])) + (
            ", …" if len(numbers) > SHOWN_NUMBERS else ""
        )
        raise LLMExtractionError(
            f"a memory points at message {unsent[0]}, not sent (sent: {shown})"
        )
    return [_draft(session, window, item) for item in items]


def _draft(session: Any, window: list[tuple[int, Any, str]], item: dict) -> MemoryDraft:
    by_number = {number: (message, text) for number, message, text in window}
    message, text = by_number[item["message"]]
    # A paraphrase is not a quote: the memory keeps its message as evidence, without it.
    quote = verbatim(str(item.get("quote") or ""), text)
    if quote not in str(attr(message, "content") or ""):
        quote = ""  # it spans a shortened code block ("[code]"), which the message never said
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
