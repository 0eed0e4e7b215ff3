"""The optional LLM summary: a 2-4 sentence summary from an OpenAI-compatible
chat-completions endpoint, given a shortened transcript (the opening and as much of the end
as fits). Any failure is a ``SummaryError`` with a readable message.
"""

from __future__ import annotations

import http.client
import json
import re
import urllib.error
import urllib.request
from collections.abc import Iterable, Sequence
from typing import Any

from sessions.enrich.text import FENCE, fit_words
from sessions.enrich.transcript import attr, is_injected


class SummaryError(RuntimeError):
    """The LLM summary could not be made (HTTP error, timeout, bad answer)."""


LLM_TRANSCRIPT_CHARS = 24_000  # ~6k tokens: fits any current chat model with room to answer
LLM_MESSAGE_CHARS = 1_500
LLM_MAX_SUMMARY_CHARS = 2_000

_LLM_SYSTEM_PROMPT = (
    "You summarise transcripts of AI agent sessions for a team memory. Write a 2-4 sentence "
    "summary in plain prose (no lists, no headings) that states: the task the user asked "
    "for, the main actions taken (files edited, commands run, tools used), the outcome "
    "(e.g. tests passed or failed, what was delivered or left unresolved) and the key "
    "entities (files, functions, errors, packages). For a conversation between people, "
    "state its topic, what was discussed and how it ended. Answer with the summary only."
)


def _transcript(messages: Sequence[Any], max_chars: int = LLM_TRANSCRIPT_CHARS) -> str:
    lines = []
    for message in messages:
        if is_injected(message):
            continue
        content = str(attr(message, "content") or "").strip()
        if not content:
            continue
        role = str(attr(message, "role") or "")
        tool_name = str(attr(message, "tool_name") or "")
        author = str(attr(message, "author") or "")
        label = role
        if tool_name:
            label = f"{role} ({'call' if role == 'assistant' else 'result'} {tool_name})"
        elif author and role in ("user", "assistant") and not re.search(r"\d|/", author):
            label = f"{author} ({role})" if role != "user" or author else role
        content = FENCE.sub("[code]", content)
        limit = LLM_MESSAGE_CHARS if role != "tool" else 400
        if len(content) > limit:
            content = content[:limit] + f" [... {len(content) - limit} chars cut]"
        lines.append(f"{label}: {content}")
    total = sum(len(line) + 1 for line in lines)
    if total <= max_chars:
        return "\n".join(lines)
    # Keep the opening (the task) and as much of the end (the outcome) as fits.
    head_budget = max_chars // 3
    head: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) + 1 > head_budget:
            break
        head.append(line)
        used += len(line) + 1
    tail: list[str] = []
    used_tail = 0
    for line in reversed(lines[len(head) :]):
        if used + used_tail + len(line) + 1 > max_chars - 60:
            break
        tail.append(line)
        used_tail += len(line) + 1
    tail.reverse()
    omitted = len(lines) - len(head) - len(tail)
    if not head and not tail:
        return lines[0][: max_chars - 60] + " [...]"
    return "\n".join([*head, f"[... {omitted} messages omitted ...]", *tail])


def llm_summary(
    messages: Iterable[Any], *, url: str, model: str, api_key: str, timeout: float = 30
) -> str:
    """A 2-4 sentence summary from an OpenAI-compatible ``POST {url}/chat/completions``.

    Raises ``SummaryError`` with a readable message on any failure.
    """
    messages = messages if isinstance(messages, Sequence) else list(messages)
    if not url or not model:
        raise SummaryError("LLM summary is not configured: url and model are required")
    if not url.lower().startswith(("http://", "https://")):
        raise SummaryError(f"LLM summary: {url!r} is not an http(s) URL")
    transcript = _transcript(messages)
    if not transcript:
        raise SummaryError("LLM summary: the session has no text to summarise")
    body = {
        "model": model,
        "messages": [
            {"role": "system", "content": _LLM_SYSTEM_PROMPT},
            {"role": "user", "content": f"Transcript:\n\n{transcript}\n\nSummary:"},
        ],
        "temperature": 0.2,
        "max_tokens": 300,
    }
    endpoint = url.rstrip("/") + "/chat/completions"
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    request = urllib.request.Request(
        endpoint, data=json.dumps(body).encode("utf-8"), headers=headers, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            raw = response.read()
    except urllib.error.HTTPError as exc:
        detail = ""
        try:
            detail = exc.read(300).decode("utf-8", "replace").strip()
        except Exception:
            detail = ""
        detail = f": {detail}" if detail else ""
        raise SummaryError(f"LLM summary failed: HTTP {exc.code} from {endpoint}{detail}") from exc
    except (http.client.HTTPException, ValueError) as exc:
        raise SummaryError(f"LLM summary failed: bad answer or address {endpoint}: {exc}") from exc
    except (TimeoutError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        if isinstance(reason, TimeoutError) or "timed out" in str(reason):
            raise SummaryError(
                f"LLM summary failed: no answer from {endpoint} within {timeout:g}s"
            ) from exc
        raise SummaryError(f"LLM summary failed: cannot reach {endpoint}: {reason}") from exc
    try:
        data = json.loads(raw.decode("utf-8"))
        content = data["choices"][0]["message"]["content"]
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SummaryError(f"LLM summary failed: {endpoint} did not answer JSON") from exc
    except (KeyError, IndexError, TypeError) as exc:
        raise SummaryError(
            f"LLM summary failed: {endpoint} answered without choices[0].message.content"
        ) from exc
    if not isinstance(content, str) or not content.strip():
        raise SummaryError(f"LLM summary failed: {endpoint} answered an empty summary")
    text = re.sub(r"\s+", " ", content).strip()
    return fit_words(text, LLM_MAX_SUMMARY_CHARS)
