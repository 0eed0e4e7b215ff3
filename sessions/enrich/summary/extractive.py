"""The extractive summary: built from the session's own words, no model needed.

``summarize`` reads a whole session; ``summarize_progressively`` extends an earlier summary
with the messages that came after it, without re-reading the session.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from sessions.enrich.summary.agent import agent_parts, first_request
from sessions.enrich.summary.chat import chat_parts, chat_topic, is_chat_between_people
from sessions.enrich.summary.render import Parts, fit_summary, key_entities, read_sections
from sessions.enrich.text import fit_words, prose_sentences, strip_end
from sessions.enrich.transcript import attr, is_injected


def _first_text(messages: Sequence[Any]) -> str:
    """The first sentence of the first message with text (not injected, if there is one)."""
    for allow_injected in (False, True):
        for message in messages[:5000]:
            if not allow_injected and is_injected(message):
                continue
            content = str(attr(message, "content") or "").strip()
            if not content:
                continue
            sentences = prose_sentences(content)
            return strip_end(sentences[0]) if sentences else " ".join(content.split())[:300]
    return ""


def _has_text(messages: Sequence[Any]) -> bool:
    return any(str(attr(m, "content") or "").strip() for m in messages)


def _summary_parts(messages: Sequence[Any], max_chars: int) -> Parts:
    if is_chat_between_people(messages):
        head = chat_topic(messages, max_chars // 3)
        if not head:
            head = first_request(messages, max_chars // 3, roles=("user", "assistant"))
        return Parts("Topic", head, "Discussed", **chat_parts(messages, max_chars))
    head = first_request(messages, max(60, int(max_chars * 0.35)))
    return Parts("Task", head, "Done", **agent_parts(messages, max_chars))


def summarize(
    messages: Iterable[Any], *, entities: Iterable[Any] = (), max_chars: int = 600
) -> str:
    """An extractive summary of a session: Task, Done, Outcome, Key entities.

    ``messages`` are objects or dicts with role/content/tool_name (author and metadata are
    optional); ``entities`` are ``(type, value)`` pairs or objects with ``.type``/``.value``
    (and optionally ``.count``). The result is at most ``max_chars`` characters, cut only at
    word boundaries, and is non-empty whenever any message has text.
    """
    messages = messages if isinstance(messages, Sequence) else list(messages)
    max_chars = max(1, int(max_chars))
    if not _has_text(messages):
        return ""
    parts = _summary_parts(messages, max_chars)
    head = parts.head
    if not head and not parts.done and not parts.outcome:
        head = _first_text(messages)
    parts = replace(
        parts,
        head_label=parts.head_label if head else "Task",
        head=head,
        entities=key_entities(entities),
    )
    text = fit_summary(parts, max_chars)
    return text or fit_words(_first_text(messages) or "Session", max_chars)


def summarize_progressively(previous_summary: str, new_messages: Iterable[Any], **kw: Any) -> str:
    """Update ``previous_summary`` with ``new_messages`` without re-reading the session.

    The rule:

    * **Task/Topic** stays the previous summary's: it is what the session was started for.
      (When the previous summary has none, the new messages' first request is used.)
    * **Done** lists the new messages' actions and sentences first; the previous summary's
      Done items follow while they fit, so earlier work fades out as the session grows.
    * **Outcome** is the new messages' (the latest test run / conclusion); the previous one
      is kept only when the new messages have none.
    * **Key entities** are the ``entities`` passed in (the caller's entities for the whole
      session); the previous ones are kept when none are passed.

    ``kw`` are ``summarize``'s keyword arguments (``entities``, ``max_chars``).
    """
    new_messages = new_messages if isinstance(new_messages, Sequence) else list(new_messages)
    max_chars = max(1, int(kw.get("max_chars", 600)))
    entities = kw.get("entities", ())
    previous = read_sections(previous_summary or "")
    has_text = _has_text(new_messages)
    if not previous and (previous_summary or "").strip():
        # Prose (an LLM's summary): its first sentence states the task.
        first = prose_sentences(previous_summary)
        previous = {"Task": strip_end(first[0])} if first else {}
    if not previous:
        if not has_text:
            return fit_words(previous_summary or "", max_chars)
        return summarize(new_messages, entities=entities, max_chars=max_chars)
    new = _summary_parts(new_messages, max_chars) if has_text else Parts("", "", "Done", [], [])
    head_label = "Topic" if "Topic" in previous else "Task"
    done = list(new.done)
    known = {strip_end(t).lower() for _, t in done}
    old_done = previous.get("Done") or previous.get("Discussed") or ""
    for item in (s.strip() for s in old_done.split("; ")):
        if item and item.lower() not in known:
            done.append((6, item))  # lowest priority: dropped first when space runs out
    outcome = list(new.outcome)
    if not outcome and previous.get("Outcome"):
        outcome = [(0, previous["Outcome"])]
    names = key_entities(entities)
    if not names and previous.get("Key entities"):
        names = [e.strip() for e in previous["Key entities"].split(", ") if e.strip()]
    parts = Parts(
        head_label=head_label,
        head=previous.get(head_label) or new.head,
        done_label="Discussed" if "Discussed" in previous else new.done_label,
        done=done,
        outcome=outcome,
        entities=names,
    )
    return fit_summary(parts, max_chars) or fit_words(previous_summary, max_chars)
