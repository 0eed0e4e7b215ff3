"""Session summaries (docs/search.md, "Context for a prompt"): task, actions, outcome, key entities.

Pure Python: no database, no Django. Messages are any objects (or dicts) with ``role``,
``content``, ``tool_name`` and optionally ``author`` and ``metadata``: ``ParsedMessage``
from the importers, ``sessions.models.Message`` rows, or test doubles.

``summarize`` is extractive and needs no model::

    Task: <the first real user request, as one sentence>. Done: <files edited, commands run,
    tools used, 1-2 top-scoring assistant sentences>. Outcome: <last test run's status and/or
    the last assistant conclusion>. Key entities: <up to 6 of the given entities>.

Chat between people (no tool calls, speakers rather than user/assistant, like LoCoMo) keeps
the shape with other labels: ``Topic`` (key phrases), ``Discussed`` (the top sentences with
their speakers), ``Outcome`` (the last substantive line).

``llm_summary`` asks an OpenAI-compatible chat-completions endpoint instead, and
``summarize_with_fallback`` uses it when configured and falls back to ``summarize``.

The modules, in the order a summary is made:

* ``tool_calls``: what the tool calls did (files edited, commands run, test results);
* ``textrank``: the most telling sentences;
* ``agent`` and ``chat``: the parts of an agent session's / a chat's summary;
* ``render``: the text, fitted to ``max_chars``;
* ``extractive``: ``summarize`` and ``summarize_progressively``;
* ``llm``: the optional LLM summary.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sessions.enrich.summary.extractive import summarize, summarize_progressively
from sessions.enrich.summary.llm import SummaryError, llm_summary

logger = logging.getLogger(__name__)

__all__ = [
    "SummaryError",
    "llm_summary",
    "summarize",
    "summarize_progressively",
    "summarize_with_fallback",
]


def summarize_with_fallback(
    messages: Iterable[Any],
    *,
    entities: Iterable[Any] = (),
    llm: Mapping[str, Any] | None = None,
    max_chars: int = 600,
) -> tuple[str, str]:
    """``(summary, method)``: the LLM's when ``llm`` (url, model, api_key[, timeout]) is given
    and it answers, else the extractive one; method is ``"llm"`` or ``"extractive"``."""
    messages = messages if isinstance(messages, Sequence) else list(messages)
    entities = list(entities or ())
    if llm:
        try:
            text = llm_summary(
                messages,
                url=str(llm.get("url") or ""),
                model=str(llm.get("model") or ""),
                api_key=str(llm.get("api_key") or ""),
                timeout=float(llm.get("timeout") or 30),
            )
            return text, "llm"
        except SummaryError as exc:
            logger.warning("%s; using the extractive summary", exc)
    return summarize(messages, entities=entities, max_chars=max_chars), "extractive"
