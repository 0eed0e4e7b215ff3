"""Agent lifecycle hooks over the memoryapp API: context at start, capture at exit.

    from memoryapp_client.hooks import on_agent_start, on_agent_exit

    context = on_agent_start("architect", workflow="create-architecture")
    prompt = context + prompt            # "" when disabled or when memory is unavailable
    ...
    session_id = on_agent_exit("architect", "Winston", "create-architecture", "web", log)

``on_agent_start`` is optional and off by default: set ``MEMORYAPP_CONTEXT_ON_START=1`` (or
pass ``enabled=True``). It never raises: an agent must start even when memory is down, so any
failure is logged as a warning and gives "". ``on_agent_exit`` raises ``CaptureError`` when the
session could not be stored, carrying what it tried to send, so the conversation is never lost
silently. Both read ``MEMORYAPP_URL`` and ``MEMORYAPP_TOKEN`` like ``MemoryClient``, and send
the working directory, so a team-level token works in its project (docs/api.md), and
``on_agent_exit`` sends ``MEMORYAPP_VISIBILITY`` (private, summary or team), when set, as the
session's visibility (docs/visibility.md).
"""

from __future__ import annotations

import json
import logging
import os
import uuid
from typing import Any

from memoryapp_client.api import VISIBILITY_ENV, MemoryClient, MemoryError
from memoryapp_client.projects import directory_slug

logger = logging.getLogger("memoryapp_client")

ENABLE_VARIABLE = "MEMORYAPP_CONTEXT_ON_START"
START_TIMEOUT = 10.0  # seconds: an agent's start must not wait long for memory
_TRUE = {"1", "true", "yes", "on"}


class CaptureError(MemoryError):
    """The session was not stored. ``payload`` is the session as it would have been sent:
    retry later with ``MemoryClient().capture(**error.payload)`` (its ``external_id`` makes
    the retry safe even if the first attempt did reach the server)."""

    def __init__(self, message: str, *, payload: dict, status: int | None = None, body=None):
        super().__init__(message, status=status, body=body)
        self.payload = payload


def context_on_start_enabled() -> bool:
    return os.environ.get(ENABLE_VARIABLE, "").strip().lower() in _TRUE


def on_agent_start(
    agent_name: str | None,
    workflow: str | None = None,
    query: str | None = None,
    *,
    enabled: bool | None = None,
    max_sessions: int = 3,
    min_relevance: float = 0.3,
    max_tokens: int = 4000,
    client: MemoryClient | None = None,
    timeout: float = START_TIMEOUT,
    **filters: Any,
) -> str:
    """The start hook: Markdown to put in the agent's prompt.

    Without ``query``, where the work stands, to pick it up: the recent decisions, open
    findings and preferences ("## Decisions", "## Open Findings", "## Preferences") and this
    agent's latest sessions' summaries ("## Latest Sessions"). With ``query``, the
    decisions, open findings and preferences relevant to it and the past sessions relevant
    to it ("## Relevant Past Discussions" …). Only this agent's sessions (and this
    workflow's, when given) are considered (the API's ``current_agent`` and
    ``current_workflow``); every agent's with ``agent_name`` None. Extra keyword arguments
    are search filters (``project``, ``topic``, ``entity``, …).

    Returns "" when disabled (``enabled`` unset and ``MEMORYAPP_CONTEXT_ON_START`` not 1),
    when nothing is relevant enough, and — with a warning logged — when the server cannot be
    reached or answers with an error. It never raises.
    """
    if enabled is None:
        enabled = context_on_start_enabled()
    if not enabled:
        return ""
    try:
        if client is None:
            # One short attempt: memory is a bonus at start, never a reason to wait.
            client = MemoryClient(timeout=timeout, retries=1, directory=directory_slug())
        result = client.context(
            query or "",
            current_agent=agent_name,
            current_workflow=workflow or None,
            max_sessions=max_sessions,
            min_relevance=min_relevance,
            max_tokens=max_tokens,
            **filters,
        )
        markdown = result.get("markdown", "") if isinstance(result, dict) else ""
        return markdown if isinstance(markdown, str) else ""
    except Exception as exc:  # an agent must never fail to start because memory is down
        whose = f" for {agent_name}" if agent_name else ""
        logger.warning("memoryapp: no past context%s at start: %s", whose, exc)
        return ""


def session_start_hook(hook_input: str, *, client: MemoryClient | None = None) -> str:
    """Claude Code's SessionStart hook (``memoryapp context --hook``): what to print for
    the JSON Claude Code sent on stdin (``session_id``, ``transcript_path``, ``cwd``,
    ``source``: startup, resume, clear or compact, ``hook_event_name``).

    When enabled (``MEMORYAPP_CONTEXT_ON_START=1``), the project's context as Claude Code
    reads it from a hook's stdout, ``{"hookSpecificOutput": {"hookEventName":
    "SessionStart", "additionalContext": "<Markdown>"}}``: where the work stands, every
    agent's (``on_agent_start`` without a query). "" when disabled, when nothing is known
    yet, and when anything fails (with a note on stderr): a session always starts.
    """
    if not context_on_start_enabled():
        return ""
    try:
        event = json.loads(hook_input or "{}")
        if not isinstance(event, dict):
            raise ValueError(f"expected a JSON object, got {type(event).__name__}")
    except ValueError as exc:
        logger.warning("memoryapp: the SessionStart hook input is not JSON (%s)", exc)
        return ""
    if client is None and isinstance(event.get("cwd"), str) and event["cwd"]:
        # The directory Claude Code works in names the project (with a team-level token).
        try:
            client = MemoryClient(
                timeout=START_TIMEOUT, retries=1, directory=directory_slug(event["cwd"])
            )
        except (MemoryError, OSError, ValueError) as exc:  # no token, or a path it cannot read
            logger.warning("memoryapp: no past context at start: %s", exc)
            return ""
    markdown = on_agent_start(None, enabled=True, client=client)
    if not markdown:
        return ""
    output = {"hookEventName": "SessionStart", "additionalContext": markdown}
    return json.dumps({"hookSpecificOutput": output})


def on_agent_exit(
    agent_name: str,
    persona: str,
    workflow: str,
    project_name: str,
    conversation: str | list[dict],
    *,
    title: str = "",
    topics: list[str] | str | None = None,
    status: str | None = None,
    started_at: str | None = None,
    ended_at: str | None = None,
    metadata: dict | None = None,
    external_id: str | None = None,
    visibility: str | None = None,
    client: MemoryClient | None = None,
) -> str:
    """The exit hook: store the conversation as a session; returns its id
    (``YYYY-MM-DD-{agent}-{6 hex}``).

    ``conversation`` is the raw log ("User: …\\nAssistant: …", split into messages and cleaned
    by the server) or a list of messages ``{"role", "content", …}`` as
    ``POST /api/v1/sessions`` takes them. ``project_name`` is kept in the session's metadata;
    a ``team/project`` name is also sent as the project (the token's project must match).

    ``visibility`` says who reads it (private, summary or team; default:
    ``$MEMORYAPP_VISIBILITY``, else the token's, else the project's: docs/visibility.md).

    Transient failures are retried by the client; the capture is idempotent (an
    ``external_id`` is made when none is given). When it still fails, ``CaptureError`` is
    raised with the reason and the whole session in ``error.payload``.
    """
    if isinstance(conversation, str):
        body: dict[str, Any] = {"conversation": conversation}
    elif isinstance(conversation, list | tuple):
        body = {"messages": list(conversation)}
    else:
        raise TypeError(
            "conversation must be the raw text or a list of message dicts, "
            f"not {type(conversation).__name__}"
        )
    payload: dict[str, Any] = {
        "external_id": external_id or f"hook-{uuid.uuid4().hex}",
        "agent_name": agent_name,
        "agent_persona": persona or "",
        "workflow": workflow or "none",
        "title": title,
        "metadata": {
            **(metadata or {}),
            **({"project_name": project_name} if project_name else {}),
        },
        **body,
    }
    if project_name and "/" in project_name:
        payload["project"] = project_name
    for key, value in (
        ("topics", topics),
        ("status", status),
        ("started_at", started_at),
        ("ended_at", ended_at),
        ("visibility", visibility or os.environ.get(VISIBILITY_ENV) or None),
    ):
        if value is not None:
            payload[key] = value
    size = (
        f"{len(conversation)} characters"
        if isinstance(conversation, str)
        else f"{len(body['messages'])} messages"
    )
    try:
        session = (client or MemoryClient(directory=directory_slug())).capture(**payload)
    except MemoryError as exc:
        raise CaptureError(
            f"memoryapp: the session of {agent_name} ({size}) was NOT saved: {exc}. "
            "Retry with MemoryClient().capture(**error.payload), or save the log to a file "
            "and upload it with `memoryapp capture FILE`.",
            payload=payload,
            status=exc.status,
            body=exc.body,
        ) from exc
    return session["id"]
