"""The agent side of memoryapp: a tiny HTTP client, agent start/exit hooks and the
`memoryapp` command.

Standard library only, so any agent can import it without pulling in the server's
dependencies. Reads ``MEMORYAPP_URL`` and ``MEMORYAPP_TOKEN`` from the environment.
"""

from memoryapp_client.api import MemoryClient, MemoryError
from memoryapp_client.hooks import CaptureError, on_agent_exit, on_agent_start

__all__ = ["CaptureError", "MemoryClient", "MemoryError", "on_agent_exit", "on_agent_start"]
