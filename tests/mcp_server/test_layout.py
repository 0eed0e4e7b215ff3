"""The two MCP transports stand on one definition of the tools, and the agent's side runs
without the server's code."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO_ROOT

SERVER_PACKAGES = ("django", "rest_framework", "mcp_server", "memories", "sessions", "search")


def test_memoryapp_mcp_imports_nothing_of_the_server():
    probe = (
        "import sys, memoryapp_client.cli, memoryapp_client.mcp_stdio; "
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({SERVER_PACKAGES!r})))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO_ROOT, check=True
    )
    assert done.stdout.strip() == "[]"


def test_both_transports_serve_the_same_tools():
    from mcp_server import views
    from memoryapp_client import mcp_stdio

    assert views.build_server is mcp_stdio.build_server
