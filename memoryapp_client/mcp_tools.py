"""The MCP tools of memoryapp: their names, descriptions and argument schemas, written once.

Both MCP transports serve these tools: ``memoryapp mcp`` (stdio, on the agent's machine; its
client talks to the server over HTTP, see ``mcp_stdio.py``) and ``/mcp`` on the server
(Streamable HTTP, see ``mcp_server/``). Each tool is one call of ``MemoryClient``: the
stdio side passes the HTTP client, the server side a client that runs the same REST views
in-process, so validation, scoping and errors are the REST API's own either way.

``build_server(get_client, run_sync)`` makes the server: ``get_client()`` gives the client
of the current caller, and ``run_sync(fn)`` runs the blocking call ``fn()`` off the event
loop (a worker thread for stdio; Django's request thread on the server).

Needs the ``mcp`` package (not the standard library, unlike the rest of this package).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import BaseModel, Field

from memoryapp_client.api import MemoryClient, MemoryError

T = TypeVar("T")
RunSync = Callable[[Callable[[], T]], Awaitable[T]]

SERVER_NAME = "memoryapp"
INSTRUCTIONS = (
    "memoryapp is your team's memory of past agent sessions: what was discussed, decided "
    "and found. At the start of a task, call get_context with the task to learn what is "
    "already known; search_sessions to look something up; record_memory when a decision is "
    "made, a problem found or a preference stated; save_session at the end to keep this "
    "conversation for the next agent."
)

READ_ONLY = ToolAnnotations(read_only_hint=True)

MemoryType = Literal["decision", "finding", "preference", "learning"]
VisibilityName = Literal["private", "summary", "team"]

# The session fields an agent needs to pick one out of a list (the rest is in resume).
SESSION_KEYS = (
    "id",
    "title",
    "agent_name",
    "workflow",
    "started_at",
    "ended_at",
    "message_count",
    "topics",
)
MEMORY_KEYS = (
    "id",
    "type",
    "content",
    "details",
    "topic",
    "tags",
    "agent",
    "person",
    "shared",
    "session",
    "status",
    "resolution",
    "priority",
    "relevance",
    "created_at",
    "owner",
    "visibility",
)

DELETED_MEMORY_KEYS = (
    "id",
    "type",
    "content",
    "topic",
    "agent",
    "person",
    "deleted_at",
    "deleted_by",
    "reason",
    "recovery_deadline",
)

Agent = Annotated[str | None, Field(description="Only sessions of this agent, e.g. 'architect'.")]
Person = Annotated[
    str | None, Field(description="Only sessions with this person (the user), e.g. 'sam'.")
]
Workflow = Annotated[
    str | None, Field(description="Only sessions of this workflow, e.g. 'create-prd'.")
]
Topic = Annotated[str | None, Field(description="Only sessions with this topic.")]
After = Annotated[
    str | None,
    Field(description="Only sessions started at or after this date (YYYY-MM-DD or ISO 8601)."),
]
Visibility = Annotated[
    VisibilityName | None,
    Field(
        description="Who reads it: 'private' (only the person this token acts for), 'summary' "
        "(the team reads the summary and accepted memories, not the messages) or 'team'. "
        "Default: the token's, else the project's. A token that acts for no person cannot "
        "ask for 'private'."
    ),
]
Before = Annotated[
    str | None,
    Field(description="Only sessions started before this date (YYYY-MM-DD or ISO 8601)."),
]


class MessageIn(BaseModel):
    """One message of the conversation to save."""

    role: Literal["user", "assistant", "system", "developer", "tool"]
    content: str = Field(description="The message's text.")
    author: str | None = Field(
        default=None, description="Who said it (a person's or an agent's name)."
    )
    timestamp: str | None = Field(default=None, description="When, in ISO 8601.")
    tool_name: str | None = Field(default=None, description="The tool called, for tool calls.")
    client_id: str | None = Field(
        default=None,
        description="Your own id of the message: a message saved again with it is skipped.",
    )


def _pick(row: dict, keys: tuple[str, ...]) -> dict:
    return {key: row[key] for key in keys if row.get(key) not in (None, "", [], {})}


def build_server(get_client: Callable[[], MemoryClient], run_sync: RunSync) -> MCPServer:
    """The MCP server with memoryapp's tools, each calling ``get_client()`` through
    ``run_sync``. A refusal of the API (a bad argument, a session that is not the caller's)
    becomes a tool error whose message names the field, as the API named it."""
    server = MCPServer(SERVER_NAME, instructions=INSTRUCTIONS)

    async def call(action: Callable[[MemoryClient], T]) -> T:
        # The one place every tool reaches the API: a project or working directory sent by
        # the caller would be added here, for both transports at once.
        def run() -> T:
            return action(get_client())

        try:
            return await run_sync(run)
        except MemoryError as exc:
            raise ToolError(str(exc)) from None

    async def rows(action: Callable[[MemoryClient], dict], keys: tuple[str, ...]) -> list[dict]:
        """A list's first page, each row cut down to ``keys``."""
        body = await call(action)
        return [_pick(row, keys) for row in body.get("results", [])]

    @server.tool(annotations=READ_ONLY)
    async def search_sessions(
        query: Annotated[str, Field(min_length=1, description="What to look for.")],
        limit: Annotated[int, Field(ge=1, le=100, description="At most this many results.")] = 10,
        mode: Annotated[
            Literal["hybrid", "semantic", "keyword"],
            Field(description="hybrid: meaning and keywords; semantic; keyword."),
        ] = "hybrid",
        min_relevance: Annotated[
            float | None, Field(ge=0, le=1, description="Leave out weaker results (0..1).")
        ] = None,
        agent: Agent = None,
        person: Person = None,
        workflow: Workflow = None,
        topic: Topic = None,
        started_after: After = None,
        started_before: Before = None,
    ) -> dict[str, Any]:
        """Search the team's past agent sessions by meaning and keyword. Returns the best matching
        messages, each with its session id (for resume_session), date, agent, message number,
        relevance (0..1) and a snippet.
        """
        filters = {
            "limit": limit,
            "mode": mode,
            "min_relevance": min_relevance,
            "agent": agent,
            "person": person,
            "workflow": workflow,
            "topic": topic,
            "started_after": started_after,
            "started_before": started_before,
        }
        body = await call(lambda client: client.search(query, **filters))
        return {
            "results": [
                {
                    "session": hit["session"]["id"],
                    "title": hit["session"].get("title", ""),
                    "date": (hit["session"].get("started_at") or "")[:10],
                    "agent": hit["session"].get("agent_name", ""),
                    "message": hit["message"]["seq"],
                    "role": hit["message"]["role"],
                    "relevance": hit["relevance"],
                    "snippet": hit["snippet"],
                }
                for hit in body.get("results", [])
            ]
        }

    @server.tool(annotations=READ_ONLY)
    async def get_context(
        task: Annotated[
            str, Field(description="The task or question; empty for where the project stands.")
        ] = "",
        max_tokens: Annotated[
            int, Field(ge=50, le=100_000, description="Token budget of the Markdown.")
        ] = 4000,
        max_sessions: Annotated[
            int, Field(ge=1, le=20, description="At most this many past sessions.")
        ] = 3,
        agent: Annotated[
            str | None, Field(description="The current agent: its own sessions only.")
        ] = None,
        workflow: Annotated[
            str | None, Field(description="The current workflow: its sessions only.")
        ] = None,
        person: Annotated[
            str | None,
            Field(description="The person the task is for: their sessions, memories and diary."),
        ] = None,
    ) -> str:
        """Get what the team already knows about a task, as Markdown within a token budget: the
        relevant decisions, open findings and preferences, and the most relevant past sessions.
        With no task, where the project stands: recent decisions, open findings, preferences and
        the latest sessions' summaries.
        """
        options = {
            "max_tokens": max_tokens,
            "max_sessions": max_sessions,
            "current_agent": agent,
            "current_workflow": workflow,
            "person": person,
        }
        body = await call(lambda client: client.context(task, **options))
        return body.get("markdown") or "Nothing relevant enough is known yet."

    @server.tool(annotations=READ_ONLY)
    async def resume_session(
        session_id: Annotated[
            str, Field(min_length=1, description="The session's id, e.g. 2025-01-15-dev-1a2b3c.")
        ],
        lastn: Annotated[
            int, Field(ge=1, le=500, description="How many of its last messages.")
        ] = 20,
    ) -> str:
        """Resume a past session: its title, summary, topics and last messages, as Markdown, to
        pick its work up again.
        """
        body = await call(lambda client: client.resume(session_id, lastn=lastn))
        return body.get("markdown", "")

    @server.tool(annotations=READ_ONLY)
    async def list_recent_sessions(
        limit: Annotated[int, Field(ge=1, le=100, description="At most this many.")] = 10,
        agent: Agent = None,
        person: Person = None,
        workflow: Workflow = None,
        topic: Topic = None,
        started_after: After = None,
    ) -> dict[str, Any]:
        """List the project's most recent sessions, newest first: id, title, agent, workflow,
        times, message count and topics.
        """
        filters = {
            "limit": limit,
            "ordering": "-started_at",
            "agent": agent,
            "person": person,
            "workflow": workflow,
            "topic": topic,
            "started_after": started_after,
        }
        return {"sessions": await rows(lambda c: c.sessions(**filters), SESSION_KEYS)}

    @server.tool()
    async def record_memory(
        type: Annotated[MemoryType, Field(description="What kind of memory.")],
        content: Annotated[
            str, Field(min_length=1, max_length=4000, description="The memory, in one statement.")
        ],
        rationale: Annotated[str | None, Field(description="Decisions: why.")] = None,
        severity: Annotated[
            Literal["critical", "important", "minor"] | None,
            Field(description="Findings: how serious."),
        ] = None,
        confidence: Annotated[
            str | None,
            Field(
                description="Decisions, findings, learnings: high, medium, low or uncertain; "
                "preferences: explicit (the person said it), inferred or uncertain."
            ),
        ] = None,
        topic: Annotated[
            str | None,
            Field(
                description="A topic key (e.g. mfa_requirements): a newer memory of the same "
                "type and topic replaces the older one."
            ),
        ] = None,
        tags: Annotated[list[str] | None, Field(description="Tags, e.g. ['security'].")] = None,
        agent: Annotated[
            str | None, Field(description="The agent recording it (a person's character).")
        ] = None,
        person: Annotated[
            str | None,
            Field(description="The person it is of (default: the session's person), e.g. 'sam'."),
        ] = None,
        shared: Annotated[
            bool | None,
            Field(
                description="Every character of that person may read it (a preference, a life "
                "event); else it stays with the agent that recorded it."
            ),
        ] = None,
        session: Annotated[
            str | None, Field(description="The id of the session it comes from.")
        ] = None,
        visibility: Visibility = None,
        fields: Annotated[
            dict[str, Any] | None,
            Field(
                description="Other fields of the type (see the API docs), e.g. "
                "{'alternatives_considered': [{'option': '…', 'rejected_because': '…'}]} "
                "for a decision, {'location': {'artifact': 'src/auth.py'}} for a finding."
            ),
        ] = None,
    ) -> dict[str, Any]:
        """Record a memory for the team: a decision (with its rationale), a finding (a problem,
        open until resolved; with its severity), a preference (of a person) or a learning.
        Restating a memory already recorded merges into it; one on the same topic that
        contradicts an older one supersedes it. Returns its id (e.g. DEC-001), the outcome
        (created or merged) and its visibility (by default its session's, else the project's).
        """
        extra = {
            **(fields or {}),
            "rationale": rationale,
            "severity": severity,
            "confidence": confidence,
            "topic": topic,
            "tags": tags,
            "agent": agent,
            "person": person,
            "shared": shared,
            "session": session,
            "visibility": visibility,
        }
        body = await call(lambda client: client.record_memory(type, content, **extra))
        return {**_pick(body, MEMORY_KEYS), "outcome": body.get("outcome", "created")}

    @server.tool(annotations=READ_ONLY)
    async def list_memories(
        type: Annotated[MemoryType, Field(description="Which kind of memory.")],
        topic: Annotated[
            str | None, Field(description="Only memories about this (by meaning and keyword).")
        ] = None,
        include_resolved: Annotated[
            bool, Field(description="Findings: also those already resolved.")
        ] = False,
        person: Annotated[
            str | None, Field(description="Only the memories of this person, e.g. 'sam'.")
        ] = None,
        character: Annotated[
            str | None,
            Field(
                description="What this character (agent) may read: its own memories, those "
                "shared by their person, and those of no agent."
            ),
        ] = None,
        limit: Annotated[int, Field(ge=1, le=100, description="At most this many.")] = 20,
        proposed: Annotated[
            bool,
            Field(
                description="List the proposals waiting for review instead of the memories "
                "in use (accept_memory or reject_memory them)."
            ),
        ] = False,
        visibility: Annotated[
            VisibilityName | None,
            Field(
                description="Only those of this visibility among what you read: 'private' "
                "lists your own private memories."
            ),
        ] = None,
    ) -> dict[str, Any]:
        """List the team's memories of one type, most important first: open findings (not resolved
        yet), decisions, preferences or learnings. With a topic, only those about it, best
        matches first; with a person and a character, what that character may read of them.
        Only memories in use, unless proposed asks for those waiting for review.
        """
        filters = {
            "status": "proposed" if proposed else None,
            "type": type,
            "person": person,
            "character": character,
            "q": topic,
            "min_relevance": 0.3 if topic else None,
            "resolution": "open" if type == "finding" and not include_resolved else None,
            "limit": limit,
            "visibility": visibility,
        }
        return {"memories": await rows(lambda c: c.memories(**filters), MEMORY_KEYS)}

    @server.tool()
    async def accept_memory(
        memory_id: Annotated[
            str, Field(min_length=1, description="The proposed memory's id, e.g. DEC-001.")
        ],
        content: Annotated[
            str | None,
            Field(
                min_length=1,
                max_length=4000,
                description="A corrected statement, to edit it before accepting it.",
            ),
        ] = None,
        reason: Annotated[str | None, Field(max_length=500, description="Why.")] = None,
    ) -> dict[str, Any]:
        """Accept a memory proposed for review (list_memories with proposed): it is used from
        now on, and replaces the memories it contradicts. Returns the memory as it is now.
        """
        body = await call(
            lambda client: client.review_memory(memory_id, "accept", content=content, reason=reason)
        )
        return _pick(body, MEMORY_KEYS)

    @server.tool()
    async def reject_memory(
        memory_id: Annotated[
            str, Field(min_length=1, description="The memory's id, e.g. FIND-004.")
        ],
        reason: Annotated[str | None, Field(max_length=500, description="Why.")] = None,
    ) -> dict[str, Any]:
        """Reject a memory (a proposal, or one in use that is wrong): it is no longer used,
        and the same statement is not proposed again. Returns the memory as it is now.
        """
        body = await call(lambda client: client.review_memory(memory_id, "reject", reason=reason))
        return _pick(body, MEMORY_KEYS)

    @server.tool()
    async def set_memory_visibility(
        memory_id: Annotated[
            str, Field(min_length=1, description="The memory's id, e.g. DEC-001.")
        ],
        visibility: Annotated[
            VisibilityName,
            Field(
                description="'team' shares it with the team, 'private' keeps it to its owner, "
                "'summary' lets the team read it once accepted."
            ),
        ],
    ) -> dict[str, Any]:
        """Share a memory with the team, or make it private again. Only its owner (the person
        this token acts for) may; a team admin only to make it less visible. Returns the
        memory as it is now.
        """
        body = await call(
            lambda client: client.review_memory(memory_id, "visibility", visibility=visibility)
        )
        return _pick(body, MEMORY_KEYS)

    @server.tool(annotations=READ_ONLY)
    async def list_deleted_memories(
        limit: Annotated[int, Field(ge=1, le=100, description="At most this many.")] = 20,
    ) -> dict[str, Any]:
        """List the memories in the trash, newest deletion first: each one's id, type, content,
        when, by whom and why it was deleted, and its recovery_deadline (until when
        restore_memory can bring it back; after it the daily purge deletes it for good).
        """
        return {
            "memories": await rows(lambda c: c.deleted_memories(limit=limit), DELETED_MEMORY_KEYS)
        }

    @server.tool()
    async def restore_memory(
        memory_id: Annotated[
            str, Field(min_length=1, description="The deleted memory's id, e.g. DEC-001.")
        ],
    ) -> dict[str, Any]:
        """Bring a deleted memory back from the trash before its recovery deadline (superseded
        again if a newer memory still replaces it). Needs a token with the delete permission.
        Returns the memory as it is now.
        """
        body = await call(lambda client: client.restore_memory(memory_id))
        return _pick(body, MEMORY_KEYS)

    @server.tool()
    async def save_session(
        agent_name: Annotated[
            str, Field(min_length=1, max_length=100, description="The agent, e.g. 'claude-code'.")
        ],
        messages: Annotated[
            list[MessageIn] | None, Field(description="The conversation, message by message.")
        ] = None,
        transcript: Annotated[
            str | None, Field(description="Or the conversation as one text.")
        ] = None,
        title: Annotated[str | None, Field(description="A short title.")] = None,
        external_id: Annotated[
            str | None,
            Field(description="Your id of this session: saving it again only adds messages."),
        ] = None,
        workflow: Annotated[str | None, Field(description="The workflow, if any.")] = None,
        topics: Annotated[list[str] | None, Field(description="What it was about.")] = None,
        status: Annotated[
            Literal["active", "completed", "interrupted", "error"] | None,
            Field(description="Where it stands."),
        ] = None,
        visibility: Visibility = None,
    ) -> dict[str, Any]:
        """Save the current conversation as a session, so later agents can search and resume it.
        Give the messages, or the whole transcript as text ('User: …' / 'Assistant: …' lines).
        Give an external_id of your own (e.g. your session's id) to save it again as it grows:
        only new messages are added. Returns the session's id.
        """
        if (messages is None) == (transcript is None):
            raise ToolError("messages, transcript: give exactly one of them")
        session = {
            "agent_name": agent_name,
            "title": title,
            "external_id": external_id,
            "workflow": workflow,
            "topics": topics,
            "status": status,
            "visibility": visibility,
        }
        if messages is not None:
            session["messages"] = [m.model_dump(exclude_none=True) for m in messages]
        else:
            session["conversation"] = transcript
        body = await call(
            lambda client: client.capture(**{k: v for k, v in session.items() if v is not None})
        )
        return {**_pick(body, SESSION_KEYS), "messages_added": body.get("messages_added")}

    return server
