"""Fixtures for the MCP tests: an SDK client connected over either transport, as an agent
connects. ``stdio`` launches ``memoryapp mcp`` as a subprocess against the live server;
``http`` speaks Streamable HTTP to the live server's ``/mcp``."""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from memoryapp_client.mcp_stdio import launch_parameters
from tests.client.conftest import (  # noqa: F401  (fixtures)
    agent_env,
    agent_token,
    closed_port_url,
    memory,
)
from tests.conftest import REPO_ROOT

TRANSPORTS = ["stdio", "http"]


@contextlib.asynccontextmanager
async def connect(
    transport: str, url: str, token: str, headers: dict[str, str] | None = None
) -> AsyncIterator[Client]:
    """An SDK client of memoryapp's MCP server over ``transport``, with ``token`` (and, over
    HTTP, more ``headers``, as an agent's MCP configuration may set them)."""
    if transport == "stdio":
        pythonpath = os.environ.get("PYTHONPATH", str(REPO_ROOT))
        server = launch_parameters(url, token, cwd=REPO_ROOT, PYTHONPATH=pythonpath)
        async with Client(server) as client:
            yield client
        return
    # Our own HTTP client (for the header) is ours to close: an open keep-alive connection
    # would hold a live-server thread, and its database connection, past the test.
    headers = {"Authorization": f"Bearer {token}", **(headers or {})}
    async with (
        create_mcp_http_client(headers=headers) as http,
        Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client,
    ):
        yield client


class Agent:
    """Runs ``script(client)`` in a fresh SDK client session of one transport."""

    def __init__(self, transport: str, url: str, token: str, headers: dict[str, str] | None = None):
        self.transport, self.url, self.token, self.headers = transport, url, token, headers

    def run(self, script: Callable[[Client], Awaitable[Any]], token: str | None = None) -> Any:
        async def main():
            async with connect(
                self.transport, self.url, token or self.token, self.headers
            ) as client:
                return await script(client)

        return anyio.run(main)

    def call(self, tool: str, arguments: dict | None = None, token: str | None = None):
        return self.run(lambda client: client.call_tool(tool, arguments or {}), token=token)


@pytest.fixture(params=TRANSPORTS)
def agent(request, live_server, agent_token) -> Agent:  # noqa: F811
    return Agent(request.param, live_server.url, agent_token)
