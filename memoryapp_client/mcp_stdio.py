"""``memoryapp mcp``: the MCP tools over stdio, for an agent that launches the server itself.

Each tool call is one request of ``MemoryClient`` to the memoryapp server (``MEMORYAPP_URL``,
``MEMORYAPP_TOKEN``), run in a worker thread so the event loop keeps reading stdin. The
tools themselves are in ``mcp_tools.py``, shared with the server's ``/mcp``.
"""

from __future__ import annotations

import anyio.to_thread

from memoryapp_client.api import MemoryClient
from memoryapp_client.mcp_tools import build_server


def serve(client: MemoryClient) -> None:
    """Serve the tools on stdin/stdout until the agent closes them. stdout carries the
    protocol only: everything else goes to stderr."""
    server = build_server(lambda: client, anyio.to_thread.run_sync)
    server.run("stdio")
