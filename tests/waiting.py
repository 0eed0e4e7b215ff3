"""Waiting for something another process does (a worker, a restarted server)."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_for(predicate: Callable[[], object], timeout: float, interval: float = 0.5) -> bool:
    """True as soon as ``predicate()`` is truthy; False if it is still falsy after ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return False
