"""The agent side of memoryapp: a tiny HTTP client and the `memoryapp` command.

Standard library only, so any agent can import it without pulling in the server's
dependencies. Reads ``MEMORYAPP_URL`` and ``MEMORYAPP_TOKEN`` from the environment.
"""

from memoryapp_client.api import MemoryClient, MemoryError

__all__ = ["MemoryClient", "MemoryError"]
