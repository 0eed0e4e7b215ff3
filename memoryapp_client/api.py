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


class MemoryClient:
    def __init__(self, url: str | None = None, token: str | None = None, timeout: float = 120):
        self.url = (url or os.environ.get("MEMORYAPP_URL") or DEFAULT_URL).rstrip("/")
        self.token = token or os.environ.get("MEMORYAPP_TOKEN")
        if not self.token:
            raise MemoryError(
                "no API token: set MEMORYAPP_TOKEN (make one with "
                "`python manage.py create_api_token --team T --project P`)"
            )
        self.timeout = timeout

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
        for attempt in range(RETRIES):
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
                if exc.code >= 500 and attempt + 1 < RETRIES:
                    last_error = exc
                    time.sleep(2**attempt)
                    continue
                message = detail.get("detail", detail) if isinstance(detail, dict) else detail
                raise MemoryError(
                    f"HTTP {exc.code}: {message}", status=exc.code, body=detail
                ) from None
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                last_error = exc
                if attempt + 1 < RETRIES:
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
