"""``InProcessClient``: ``MemoryClient`` whose requests run the REST API's views in this process.

The MCP tools on ``/mcp`` call the API exactly as ``memoryapp mcp`` does over HTTP, as the
caller the MCP request authenticated, but without a network round trip: each request is
built from the MCP request (its host, scheme and Authorization header), resolved by the URL
map and handed to the view. So the tools are validated, scoped (``teams.access.Access``
through the views' base) and refused exactly like the REST API, with its errors and codes.
"""

from __future__ import annotations

import io
import json
import urllib.parse
from typing import Any

from django.core.handlers.wsgi import WSGIRequest
from django.http import HttpRequest
from django.urls import resolve

from memoryapp_client.api import MemoryClient, http_error

# What the inner request keeps of the MCP request: who is calling, the working directory a
# team-level token works in (X-Memoryapp-Directory, as on REST), and the host and scheme
# the API's links (pagination) are built from.
FORWARDED = (
    "HTTP_AUTHORIZATION",
    "HTTP_X_MEMORYAPP_DIRECTORY",
    "HTTP_HOST",
    "SERVER_NAME",
    "SERVER_PORT",
    "REMOTE_ADDR",
    "HTTP_X_FORWARDED_PROTO",
    "HTTP_X_FORWARDED_FOR",
    "wsgi.url_scheme",
)


class InProcessClient(MemoryClient):
    def __init__(self, outer: HttpRequest, token: str, authenticated: tuple[Any, Any]):
        """``authenticated``: what ``ApiTokenAuthentication`` found for ``token`` on the MCP
        request, (principal, token row)."""
        super().__init__(url=outer.build_absolute_uri("/"), token=token, retries=1)
        self._environ = {key: outer.META[key] for key in FORWARDED if key in outer.META}
        self._authenticated = authenticated

    def _send(
        self, method: str, path: str, params: dict | None, body: bytes | None, content_type: str
    ) -> Any:
        body = body or b""
        # WSGI's PATH_INFO is the decoded path, read as latin-1 (what Django's handler gets).
        path_info = urllib.parse.unquote_to_bytes(path).decode("iso-8859-1")
        environ = {
            **self._environ,
            "REQUEST_METHOD": method,
            "PATH_INFO": path_info,
            "SCRIPT_NAME": "",
            "QUERY_STRING": urllib.parse.urlencode(params) if params else "",
            "CONTENT_TYPE": content_type if body else "",
            "CONTENT_LENGTH": str(len(body)),
            "HTTP_ACCEPT": "application/json",
            "wsgi.input": io.BytesIO(body),
        }
        request = WSGIRequest(environ)
        # The token was looked up once, for the MCP request: DRF's forced authentication
        # hands the view that same principal instead of a second lookup per tool call.
        request._force_auth_user, request._force_auth_token = self._authenticated
        match = resolve(path_info)
        response = match.func(request, *match.args, **match.kwargs)
        if hasattr(response, "render"):
            response.render()
        if response.status_code >= 400:
            raise http_error(response.status_code, response.content)
        return json.loads(response.content) if response.content else None
