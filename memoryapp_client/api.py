"""``MemoryClient``: the REST API of memoryapp, from an agent's side."""

from __future__ import annotations

import io
import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path
from typing import Any

DEFAULT_URL = "http://127.0.0.1:8000"
RETRIES = 3  # uploads are idempotent (external ids, client ids), so retrying is safe


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
        detail = {key: value for key, value in detail.items() if key != "code"}
        if set(detail) == {"detail"}:
            return describe_error(detail["detail"])
        return "; ".join(f"{key}: {describe_error(value)}" for key, value in detail.items())
    if isinstance(detail, list):
        return " ".join(describe_error(item) for item in detail)
    text = " ".join(str(detail).split())
    return text if len(text) <= 500 else text[:500] + "…"


def _present(values: dict) -> dict:
    """Leave out options given as None (so callers may pass ``agent=None``)."""
    return {key: value for key, value in values.items() if value is not None}


class MemoryClient:
    def __init__(
        self,
        url: str | None = None,
        token: str | None = None,
        timeout: float = 120,
        retries: int = RETRIES,
    ):
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
        query = f"?{urllib.parse.urlencode(params)}" if params else ""
        if json_body is not None:
            body, content_type = json.dumps(json_body).encode(), "application/json"
        headers = {"Authorization": f"Bearer {self.token}", "Accept": "application/json"}
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
                raw = exc.read()
                try:
                    detail = json.loads(raw)
                except ValueError:
                    detail = raw.decode(errors="replace")
                if exc.code >= 500 and attempt + 1 < self.retries:
                    last_error = exc
                    time.sleep(2**attempt)
                    continue
                raise MemoryError(
                    f"HTTP {exc.code}: {describe_error(detail)}", status=exc.code, body=detail
                ) from None
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                last_error = exc
                if attempt + 1 < self.retries:
                    time.sleep(2**attempt)
        raise MemoryError(f"cannot reach memoryapp at {self.url}: {last_error}")

    # -- capture ---------------------------------------------------------------------

    def capture(self, **session: Any) -> dict:
        """POST /api/v1/sessions: a whole session (``messages=[...]`` or ``conversation=...``)."""
        return self.request("POST", "/api/v1/sessions", json_body=session)

    def append(self, session_id: str, messages: list[dict]) -> dict:
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

    def import_bytes(self, data: bytes, *, filename: str = "", format: str | None = None) -> dict:
        params = {"filename": filename} if filename else {}
        if format:
            params["format"] = format
        return self.request("POST", "/api/v1/import", params=params, body=data)

    def import_path(self, path: Path, *, format: str | None = None) -> dict:
        """Upload a transcript file, or a session folder (transcript.jsonl + …) as a zip."""
        path = Path(path)
        if path.is_dir():
            buffer = io.BytesIO()
            with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
                for child in sorted(path.iterdir()):
                    if child.is_file():
                        archive.write(child, f"{path.name}/{child.name}")
            return self.import_bytes(
                buffer.getvalue(), filename=f"{path.name}.zip", format=format or "anthropic_session"
            )
        return self.import_bytes(path.read_bytes(), filename=path.name, format=format)

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
