"""Redis on a request's path, without ever making the request wait for it.

A request must not wait for the broker (a capture waited ~6 s per request while Redis was
down: kombu retries a connection for its whole connect timeout). ``QuickBroker.run`` connects
once, with short socket timeouts and no retry; after a failure it does not try again for a
few seconds, so a burst of requests during an outage doesn't each pay the timeout. What the
caller does without Redis is its own choice (``BrokerUnavailable``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TypeVar

logger = logging.getLogger(__name__)

QUICK_TRANSPORT_OPTIONS = {
    "max_retries": 0,
    "socket_connect_timeout": 0.5,
    "socket_timeout": 0.5,
}
PAUSE_AFTER_FAILURE = 5.0  # seconds

T = TypeVar("T")


class BrokerUnavailable(Exception):
    """Redis did not answer now, or did not a moment ago."""


class QuickBroker:
    """One use of Redis (``purpose`` names it in logs) with its own pause after a failure."""

    def __init__(self, purpose: str, pause: float = PAUSE_AFTER_FAILURE):
        self.purpose = purpose
        self.pause = pause
        self.down_until = 0.0  # time.monotonic() before which Redis is not tried

    def run(self, work: Callable[..., T]) -> T:
        """``work(connection)`` on a fresh kombu connection; raises ``BrokerUnavailable``
        at once while paused, or after the short timeouts when Redis fails."""
        if time.monotonic() < self.down_until:
            raise BrokerUnavailable(self.purpose)
        from memoryapp.celery import app

        try:
            with app.connection_for_write(transport_options=QUICK_TRANSPORT_OPTIONS) as conn:
                return work(conn)
        except Exception as exc:
            self.down_until = time.monotonic() + self.pause
            logger.warning(
                "Redis unavailable for %s (%s); not trying again for %g s",
                self.purpose,
                exc,
                self.pause,
            )
            raise BrokerUnavailable(self.purpose) from exc

    def reset(self) -> None:
        """Try Redis again at the next call (tests, after an outage they made)."""
        self.down_until = 0.0
