"""``/mcp``: the MCP tools over Streamable HTTP, served by the Django (WSGI) web server.

The web server is gunicorn with Django's WSGI application, and the MCP SDK's HTTP transport
is ASGI. Rather than run the site under ASGI, this one view drives the SDK for one request:
the SDK's session manager in *stateless, JSON-response* mode answers each POST with one
JSON body and keeps nothing between requests, so a WSGI view can run it to completion with
``async_to_sync`` and return its answer. Stateless means no ``Mcp-Session-Id``, no
server-sent events and no GET stream: this server's tools answer in one response and never
call the client back, so nothing is lost.

Who calls is the project API token of the REST API (``Authorization: Bearer mem_…``): no
token, or a wrong one, is a 401 before the SDK sees the request. Each tool then runs the
REST views in-process with that token (``inprocess.py``), on this request's thread (the
tools' blocking calls go back to it through ``sync_to_async``), so the scoping, permissions
and errors are the REST API's.
"""

from __future__ import annotations

import contextvars
import threading
from functools import cache

import anyio
from asgiref.sync import async_to_sync, sync_to_async
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from mcp.server.mcpserver import MCPServer
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from rest_framework.exceptions import AuthenticationFailed

from core.api_errors import error_json
from core.error_codes import ErrorCode
from mcp_server.inprocess import InProcessClient
from memoryapp_client.mcp_tools import build_server
from teams.authentication import ApiTokenAuthentication

CALLER: contextvars.ContextVar[InProcessClient] = contextvars.ContextVar("mcp_caller")
# Making a session manager sets it on the server (the SDK's public way to get one): two
# requests at once must each read their own.
_MANAGER_LOCK = threading.Lock()


def _run_on_request_thread(fn):
    # thread_sensitive: back on the thread blocked in async_to_sync, with its DB connection.
    return sync_to_async(fn, thread_sensitive=True)()


@cache
def mcp_app() -> MCPServer:
    return build_server(CALLER.get, _run_on_request_thread)


def _session_manager() -> StreamableHTTPSessionManager:
    """A manager for one request (a manager runs once). Django already checked the Host
    against ALLOWED_HOSTS, and the caller is a Bearer token, not a browser's cookie, so the
    SDK's own DNS-rebinding check has nothing to add."""
    server = mcp_app()
    with _MANAGER_LOCK:
        server.streamable_http_app(
            stateless_http=True,
            json_response=True,
            max_request_body_size=settings.MAX_REQUEST_BYTES,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        return server.session_manager


def _asgi_scope(request: HttpRequest) -> dict:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": request.method,
        "scheme": request.scheme,
        "path": request.path,
        "raw_path": request.path.encode(),
        "root_path": "",
        "query_string": request.META.get("QUERY_STRING", "").encode("latin-1"),
        "headers": [
            (name.lower().encode("latin-1"), value.encode("latin-1"))
            for name, value in request.headers.items()
        ],
        "client": (request.META.get("REMOTE_ADDR", ""), 0),
        "server": (request.META.get("SERVER_NAME", ""), int(request.get_port())),
    }


async def _exchange(scope: dict, body: bytes) -> tuple[int, list, bytes]:
    """Run the SDK on one request: its status, headers and body."""
    status, headers, chunks = 500, [], []
    answered = anyio.Event()
    sent = False

    async def receive() -> dict:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await answered.wait()  # the client stays connected until the answer is complete
        return {"type": "http.disconnect"}

    async def send(message: dict) -> None:
        nonlocal status, headers
        if message["type"] == "http.response.start":
            status, headers = message["status"], message.get("headers", [])
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                answered.set()

    manager = _session_manager()
    async with manager.run():
        await manager.handle_request(scope, receive, send)
    return status, headers, b"".join(chunks)


def _unauthorized(detail: str) -> HttpResponse:
    response = error_json(401, detail, ErrorCode.NOT_AUTHENTICATED)
    response["WWW-Authenticate"] = 'Bearer realm="memoryapp"'
    return response


@csrf_exempt
def mcp_endpoint(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        response = error_json(
            405,
            "This MCP endpoint is stateless: POST one JSON-RPC message per request "
            "(no GET stream, no session to DELETE).",
        )
        response["Allow"] = "POST"
        return response
    try:
        found = ApiTokenAuthentication().authenticate(request)
    except AuthenticationFailed as exc:
        return _unauthorized(str(exc.detail))
    if found is None:
        return _unauthorized(
            "Send your project API token: 'Authorization: Bearer mem_…' (make one on the API "
            "tokens page or with manage.py create_api_token)."
        )
    token = request.headers["Authorization"].split()[1]
    reset = CALLER.set(InProcessClient(request, token, found))
    try:
        status, headers, body = async_to_sync(_exchange)(_asgi_scope(request), request.body)
    finally:
        CALLER.reset(reset)
    response = HttpResponse(body, status=status)
    for name, value in headers:
        if name.lower() != b"content-length":
            response[name.decode("latin-1")] = value.decode("latin-1")
    return response
