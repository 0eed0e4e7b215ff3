"""``memoryapp mcp``: the MCP tools over stdio, for an agent that launches the server itself.

Each tool call is one request of ``MemoryClient`` to the memoryapp server (``MEMORYAPP_URL``,
``MEMORYAPP_TOKEN``), run in a worker thread so the event loop keeps reading stdin. The
tools themselves are in ``mcp_tools.py``, shared with the server's ``/mcp``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio.to_thread
from mcp.client.stdio import StdioServerParameters

from memoryapp_client.api import MemoryClient
from memoryapp_client.mcp_tools import build_server


def serve(client: MemoryClient) -> None:
    """Serve the tools on stdin/stdout until the agent closes them. stdout carries the
    protocol only: everything else goes to stderr."""
    server = build_server(lambda: client, anyio.to_thread.run_sync)
    server.run("stdio")


def launch_parameters(
    url: str, token: str, *, cwd: Path | None = None, **env: str
) -> StdioServerParameters:
    """How an MCP client of the SDK launches ``memoryapp mcp`` with this Python, against
    ``url`` with ``token`` (``env``: more of its environment, e.g. ``PYTHONPATH``)."""
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "memoryapp_client.cli", "mcp"],
        env={"MEMORYAPP_URL": url, "MEMORYAPP_TOKEN": token, **env},
        cwd=cwd,
    )
