"""``MemoryClient``: the REST API of memoryapp, from an agent's side."""

from __future__ import annotations

import io
import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
import zipfile
from pathlib import Path
from typing import Any

from memoryapp_client.projects import directory_slug
from protocol.directories import DIRECTORY_HEADER, header_value

DEFAULT_URL = "http://127.0.0.1:8000"
# Who reads a session (docs/visibility.md), and the variable a capture's default comes from.
VISIBILITIES = ("private", "summary", "team")
VISIBILITY_ENV = "MEMORYAPP_VISIBILITY"
# Uploads are idempotent (external ids, client ids: ``capture`` and ``append`` give one to what
# comes without), so retrying a request whose answer was lost is safe.
RETRIES = 3


class MemoryError(RuntimeError):
    def __init__(self, message: str, *, status: int | None = None, body: Any = None):
        super().__init__(message)
        self.status = status
        self.body = body
        # The server's stable error code ("MEM_E005": no such session; docs/api.md lists them).
        self.code = body.get("code") if isinstance(body, dict) else None


def describe_error(detail: Any) -> str:
    """The server's error body as one line: ``{"q": ["give a query"]}`` → ``q: give a query``
    (its ``code`` is on the exception, not in the message)."""
    if isinstance(detail, dict):
        # The code is on the exception; a field the server left empty says nothing.
        detail = {k: v for k, v in detail.items() if k != "code" and v not in (None, "", [])}
        if set(detail) == {"detail"}:
            return describe_error(detail["detail"])
        return "; ".join(f"{key}: {describe_error(value)}" for key, value in detail.items())
    if isinstance(detail, list):
        return " ".join(describe_error(item) for item in detail)
    text = " ".join(str(detail).split())
    return text if len(text) <= 500 else text[:500] + "…"


def http_error(status: int, raw: bytes) -> MemoryError:
    """The error an HTTP answer ``status`` with body ``raw`` raises, its message naming the
    field the server named (one mapping, for every transport of ``MemoryClient.request``)."""
    try:
        detail = json.loads(raw)
    except ValueError:
        detail = raw.decode(errors="replace")
    return MemoryError(f"HTTP {status}: {describe_error(detail)}", status=status, body=detail)


# What "relevant to a topic" means for the get_* helpers: the context endpoint's default
# relevance floor, so an agent gets the same memories either way.
RELEVANT = 0.3


def _relevant(topic: str | None) -> float | None:
    return RELEVANT if topic else None


def _present(values: dict) -> dict:
    """Leave out options given as None (so callers may pass ``agent=None``)."""
    return {key: value for key, value in values.items() if value is not None}


class MemoryClient:
    """``directory``: the agent's working directory (a path or its slug, see
    ``memoryapp_client.projects.directory_slug``), sent with every request so a team-level
    token works in that directory's project (a project token ignores it); None: the
    token's whole scope."""

    def __init__(
        self,
        url: str | None = None,
        token: str | None = None,
        timeout: float = 120,
        retries: int = RETRIES,
        directory: str | None = None,
    ):
        self.directory = directory
        self.url = (url or os.environ.get("MEMORYAPP_URL") or DEFAULT_URL).rstrip("/")
        self.token = token or os.environ.get("MEMORYAPP_TOKEN")
        if not self.token:
            raise MemoryError(
                "no API token: set MEMORYAPP_TOKEN (make one with "
                "`python manage.py create_api_token --team T --project P`)"
            )
        self.timeout = timeout
        self.retries = max(1, retries)

    # -- transport -------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        *,
        params: dict | None = None,
        body: bytes | None = None,
        json_body: Any = None,
        content_type: str = "application/octet-stream",
    ) -> Any:
        if json_body is not None:
            body, content_type = json.dumps(json_body).encode(), "application/json"
        return self._send(method, path, params, body, content_type)

    def _send(
        self, method: str, path: str, params: dict | None, body: bytes | None, content_type: str
    ) -> Any:
        """One request over HTTP, retried on a 5xx or no answer; its JSON answer, or
        ``MemoryError``."""
        query = f"?{urllib.parse.urlencode(params)}" if params else ""
        headers = {"Authorization": f"Bearer {self.token}", "Accept": "application/json"}
        if self.directory:
            headers[DIRECTORY_HEADER] = header_value(directory_slug(self.directory))
        if body is not None:
            headers["Content-Type"] = content_type
        last_error: Exception | None = None
        for attempt in range(self.retries):
            req = urllib.request.Request(
                self.url + path + query, data=body, method=method, headers=headers
            )
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as response:
                    raw = response.read()
                    return json.loads(raw) if raw else None
            except urllib.error.HTTPError as exc:
                if exc.code >= 500 and attempt + 1 < self.retries:
                    last_error = exc
                    time.sleep(2**attempt)
                    continue
                raise http_error(exc.code, exc.read()) from None
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                last_error = exc
                if attempt + 1 < self.retries:
                    time.sleep(2**attempt)
        raise MemoryError(f"cannot reach memoryapp at {self.url}: {last_error}")

    # -- capture ---------------------------------------------------------------------

    def capture(self, **session: Any) -> dict:
        """POST /api/v1/sessions: a whole session (``messages=[...]`` or ``conversation=...``).

        Without an ``external_id`` one is made here: a retry of a request whose answer was lost
        (the server stored it, then the connection dropped or timed out) then finds the session
        it stored instead of storing a second one."""
        if not session.get("external_id"):
            session = {**session, "external_id": f"client-{uuid.uuid4().hex}"}
        return self.request("POST", "/api/v1/sessions", json_body=session)

    def append(self, session_id: str, messages: list[dict]) -> dict:
        """POST /api/v1/sessions/{id}/messages. A message without a ``client_id`` is given one
        here, for the same reason as ``capture``'s external id: a retry stores it once."""
        messages = [
            message if message.get("client_id") else {**message, "client_id": uuid.uuid4().hex}
            for message in messages
        ]
        return self.request(
            "POST", f"/api/v1/sessions/{session_id}/messages", json_body={"messages": messages}
        )

    def delete_session(self, session_id: str, reason: str = "") -> bool:
        """DELETE /api/v1/sessions/{id}: move it to the trash (restorable by an admin for the
        project's trash days). True when deleted, False when there is no such session. The
        token needs the "delete" permission."""
        params = {"reason": reason} if reason else None
        try:
            self.request("DELETE", self._session_path(session_id), params=params)
        except MemoryError as exc:
            if exc.status == 404:
                return False
            raise
        return True

    def import_bytes(
        self,
        data: bytes,
        *,
        filename: str = "",
        format: str | None = None,
        visibility: str | None = None,
    ) -> dict:
        """POST /api/v1/import; ``visibility``: who reads the new sessions (private, summary
        or team; default: the token's, else the project's)."""
        params = {"filename": filename} if filename else {}
        if format:
            params["format"] = format
        if visibility:
            params["visibility"] = visibility
        return self.request("POST", "/api/v1/import", params=params, body=data)

    def import_path(
        self, path: Path, *, format: str | None = None, visibility: str | None = None
    ) -> dict:
        """Upload a transcript file, or a session folder (transcript.jsonl + …) as a zip."""
        path = Path(path)
        if path.is_dir():
            buffer = io.BytesIO()
            with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
                for child in sorted(path.iterdir()):
                    if child.is_file():
                        archive.write(child, f"{path.name}/{child.name}")
            return self.import_bytes(
                buffer.getvalue(),
                filename=f"{path.name}.zip",
                format=format or "anthropic_session",
                visibility=visibility,
            )
        return self.import_bytes(
            path.read_bytes(), filename=path.name, format=format, visibility=visibility
        )

    def set_visibility(self, session_ids: list[str], visibility: str) -> dict:
        """POST /api/v1/sessions/visibility: give the sessions ``visibility``, all or nothing
        (docs/visibility.md); answers which ``changed`` and which were ``unchanged``."""
        return self.request(
            "POST",
            "/api/v1/sessions/visibility",
            json_body={"ids": list(session_ids), "visibility": visibility},
        )

    # -- search and context ----------------------------------------------------------

    def search(self, query: str, **filters: Any) -> dict:
        """POST /api/v1/search: hybrid (default), ``semantic`` or ``keyword`` search.

        Options: ``mode``, ``limit``, ``min_relevance``, ``group``, ``mmr``, ``recency``;
        filters: ``project``, ``agent``, ``workflow``, ``role``, ``status``, ``lifecycle``,
        ``source_format``, ``topic``, ``entity_type``, ``entity``, ``started_after``,
        ``started_before``, ``ended_after``, ``ended_before``. With an empty query and
        ``entity``/``entity_type``, the sessions that touched the entity (in ``sessions``).
        """
        return self.request("POST", "/api/v1/search", json_body={"q": query, **_present(filters)})

    def context(self, query: str, **options: Any) -> dict:
        """POST /api/v1/context: ready-to-inject context — the response's
        ``markdown`` (the relevant "## Decisions", "## Open Findings", "## Preferences" and
        "## Relevant Past Discussions" …, "" when nothing is relevant enough; with ``query``
        "", where the project stands: recent decisions, open findings, preferences and
        "## Latest Sessions"), ``tokens``, ``sessions`` and ``sections``. Options:
        ``current_agent``, ``current_workflow``, ``max_sessions`` (3), ``min_relevance`` (0.3),
        ``max_tokens`` (4000) and the search filters."""
        return self.request(
            "POST", "/api/v1/context", json_body={"query": query, **_present(options)}
        )

    def resume(self, session_id: str, lastn: int = 20) -> dict:
        """GET /api/v1/sessions/{id}/resume: the session, its summary and last ``lastn``
        messages as ``markdown`` and as ``messages``."""
        return self.request(
            "GET", f"{self._session_path(session_id)}/resume", params={"lastn": lastn}
        )

    def sessions(self, **params: Any) -> dict:
        """GET /api/v1/sessions: the sessions of the project (``project``: 'team/project',
        an id or a working directory; else the client's ``directory``, else all the token
        sees), newest first or by ``ordering`` (started_at, ended_at, message_count,
        size_bytes; '-' for descending), narrowed by the search filters (``agent``,
        ``person``, ``status``, ``topic``, ``started_after`` …), ``limit`` per page and
        ``cursor`` (the ``next`` link's). Returns ``{"results": [...], "next": ...}``."""
        return self.request(
            "GET",
            "/api/v1/sessions",
            params={k: _query_value(v) for k, v in _present(params).items()} or None,
        )

    def similar(self, session_id: str, limit: int = 5) -> dict:
        """GET /api/v1/sessions/{id}/similar: the sessions nearest to this one."""
        return self.request(
            "GET", f"{self._session_path(session_id)}/similar", params={"limit": limit}
        )

    def entities(self, **params: Any) -> dict:
        """GET /api/v1/entities: ``type``, ``q`` (part of the value), ``limit`` and the search
        filters; the entities most widespread first."""
        return self.request("GET", "/api/v1/entities", params=_present(params) or None)

    @staticmethod
    def _session_path(session_id: str) -> str:
        if not session_id or not str(session_id).strip():
            raise MemoryError("give a session id (e.g. 2025-01-15-architect-1a2b3c)")
        return "/api/v1/sessions/" + urllib.parse.quote(str(session_id).strip(), safe="")

    # -- memories: decisions, findings, preferences, agent state ----------------------

    def record_memory(self, type: str, content: str, **fields: Any) -> dict:
        """POST /api/v1/memories: one memory with its type's own fields (a decision's
        ``rationale``, ``alternatives_considered=[{"option", "rejected_because"}]``, a
        finding's ``severity``, ``location``, a preference's ``confidence``, ``applies_to``…)
        and the common ones: ``tags``, ``topic``, ``agent``, ``scope``, ``session`` (its id),
        ``evidence`` (message numbers), ``supersedes`` (ids), ``links=[{"kind", "target"}]``.
        The answer's ``outcome`` is "merged" when it restated a memory already recorded."""
        body = {"type": type, "content": content, **_present(fields)}
        return self.request("POST", "/api/v1/memories", json_body=body)

    def record_decision(self, decision: str, **fields: Any) -> dict:
        """A decision: ``rationale``, ``alternatives_considered``, ``agreed_by``,
        ``agents_involved``, ``confidence`` (high|medium|low|uncertain), ``reversible``,
        ``implementation_impact`` (high|medium|low), and the common fields."""
        return self.record_memory("decision", decision, **fields)

    def record_finding(self, finding: str, **fields: Any) -> dict:
        """A finding (open until resolved): ``severity`` (critical|important|minor),
        ``category``, ``location={"artifact", "section", "line_numbers"}``, ``impact``,
        ``root_cause``, ``next_steps``, and the common fields."""
        return self.record_memory("finding", finding, **fields)

    def record_preference(self, preference: str, **fields: Any) -> dict:
        """A preference: ``category``, ``topic``, ``confidence`` (explicit|inferred|
        uncertain), ``source``, ``context``, ``applies_to={"projects", "domains"}``."""
        return self.record_memory("preference", preference, **fields)

    def update_agent_state(self, agent: str, session: str | None = None, **sections: Any) -> dict:
        """PUT /api/v1/agent-states/{agent}: the sections given (``current_context``,
        ``working_memory``, ``session_learnings``, ``memory_refs``) replace those of the
        agent's state in ``session`` (or in the project); the others are kept."""
        body = _present({"session": session, **sections})
        return self.request("PUT", self._agent_path(agent), json_body=body)

    def agent_state(self, agent: str, session: str | None = None) -> dict:
        return self.request(
            "GET", self._agent_path(agent), params=_present({"session": session}) or None
        )

    def memories(self, **filters: Any) -> dict:
        """GET /api/v1/memories: ``type`` (one or a list), ``tag``, ``topic``, ``agent``,
        ``session``, ``after``, ``before``, ``confidence``, ``status``, ``resolution``,
        ``min_priority``, ``include_decayed``, ``pinned``, ``sort``, ``limit``, ``cursor``;
        ``q`` searches by meaning and keyword (``min_relevance`` drops weaker matches).
        Returns ``{"results": [...], "next": ...}``."""
        params = {
            key: ",".join(value) if isinstance(value, list | tuple) else _query_value(value)
            for key, value in _present(filters).items()
        }
        return self.request("GET", "/api/v1/memories", params=params or None)

    def memory(self, memory_id: str, project: str | None = None) -> dict:
        """GET /api/v1/memories/{id} (``DEC-001``): with its evidence and relationships.
        Reading it counts as an access."""
        params = _present({"project": project}) or None
        return self.request("GET", self._memory_path(memory_id), params=params)

    def resolve_finding(
        self, finding_id: str, project: str | None = None, **resolution: Any
    ) -> dict:
        """POST /api/v1/memories/{id}/resolve: ``action_taken``, ``verification``, ``by``,
        ``resolved_by`` (the id of the memory that resolves it)."""
        return self.request(
            "POST",
            f"{self._memory_path(finding_id)}/resolve",
            params=_present({"project": project}) or None,
            json_body=_present(resolution),
        )

    def link_memories(self, source: str, kind: str, target: str) -> dict:
        """``source`` resolves | led_to | influenced | supersedes | relates_to ``target``."""
        return self.request(
            "POST",
            f"{self._memory_path(source)}/links",
            json_body={"kind": kind, "target": target},
        )

    def related_memories(self, memory_id: str, limit: int = 5) -> dict:
        return self.request(
            "GET", f"{self._memory_path(memory_id)}/related", params={"limit": limit}
        )

    def delete_memory(self, memory_id: str, reason: str, project: str | None = None) -> None:
        """DELETE /api/v1/memories/{id}?reason=: to the trash, restorable until its
        recovery deadline (admins, or a token with the delete permission)."""
        params = _present({"reason": reason, "project": project})
        self.request("DELETE", self._memory_path(memory_id), params=params)

    def review_memory(
        self,
        memory_id: str,
        action: str,
        project: str | None = None,
        **body: Any,
    ) -> dict:
        """POST /api/v1/memories/{id}/{action}: ``accept`` (``content`` to edit it first,
        ``reason``), ``reject``, ``unreject``, ``revert`` (``reason`` needed) or ``reopen``.
        Returns the memory with its history."""
        return self.request(
            "POST",
            f"{self._memory_path(memory_id)}/{action}",
            params=_present({"project": project}) or None,
            json_body=_present(body),
        )

    def deleted_memories(self, project: str | None = None, limit: int | None = None) -> dict:
        """GET /api/v1/memories/trash: deleted memories, newest deletion first, each with
        ``deleted_at``, ``deleted_by``, ``reason`` and ``recovery_deadline``."""
        params = {
            k: _query_value(v) for k, v in _present({"project": project, "limit": limit}).items()
        }
        return self.request("GET", "/api/v1/memories/trash", params=params or None)

    def restore_memory(self, memory_id: str, project: str | None = None) -> dict:
        """POST /api/v1/memories/{id}/restore: back from the trash before its recovery
        deadline (after it: a 409, code MEM_E007)."""
        return self.request(
            "POST",
            f"{self._memory_path(memory_id)}/restore",
            params=_present({"project": project}) or None,
        )

    def delete_memories(self, *, dry_run: bool = True, **filters: Any) -> dict:
        """POST /api/v1/memories/delete: every memory matching ``project``, ``topic``,
        ``type`` (a list), ``agent``, ``person``, ``since``/``until`` (ISO 8601, on when it
        was said), ``all``; a dry run (the default) only counts and shows a sample. A real
        one needs ``reason``."""
        body = {**_present(filters), "dry_run": dry_run}
        return self.request("POST", "/api/v1/memories/delete", json_body=body)

    def get_relevant_decisions(self, topic: str, limit: int = 10) -> list[dict]:
        """The decisions most relevant to ``topic``, by meaning and keyword."""
        return self.memories(type="decision", q=topic, min_relevance=RELEVANT, limit=limit)[
            "results"
        ]

    def get_open_findings(self, topic: str | None = None, limit: int = 50) -> list[dict]:
        """Findings not resolved yet (about ``topic`` when given), most important first."""
        found = self.memories(
            type="finding", resolution="open", q=topic, min_relevance=_relevant(topic), limit=limit
        )
        return found["results"]

    def get_user_preferences(self, topic: str | None = None, limit: int = 50) -> list[dict]:
        """The people's preferences (about ``topic`` when given), most important first."""
        return self.memories(
            type="preference", q=topic, min_relevance=_relevant(topic), limit=limit
        )["results"]

    @staticmethod
    def _memory_path(memory_id: str) -> str:
        if not memory_id or not str(memory_id).strip():
            raise MemoryError("give a memory id (e.g. DEC-001)")
        return "/api/v1/memories/" + urllib.parse.quote(str(memory_id).strip(), safe="")

    @staticmethod
    def _agent_path(agent: str) -> str:
        if not agent or not str(agent).strip():
            raise MemoryError("give the agent's name (e.g. architect)")
        return "/api/v1/agent-states/" + urllib.parse.quote(str(agent).strip(), safe="")


def _query_value(value: Any) -> str:
    """A query parameter as the API reads it (booleans as true/false)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
