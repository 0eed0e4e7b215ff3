"""Redis on a request's path, without ever making the request wait for it.

A request must not wait for the broker (a capture waited ~6 s per request while Redis was
down: kombu retries a connection for its whole connect timeout). ``QuickBroker.run`` connects
with short socket timeouts and no retry; after a failure it does not try again for a few
seconds, so a burst of requests during an outage doesn't each pay the timeout. What the
caller does without Redis is its own choice (``BrokerUnavailable``).

The connection is kept for the next call (one per process and thread): opening a kombu
connection cost each capture more than the rest of its Redis work (docs/benchmarks.md,
"Appends"). A kept connection that Redis closed is opened again by redis-py's pool when it
is next taken; one that fails is dropped with the pause.
"""

from __future__ import annotations

import logging
import os
import threading
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
        self._kept = threading.local()

    def run(self, work: Callable[..., T]) -> T:
        """``work(connection)`` on this thread's kombu connection; raises
        ``BrokerUnavailable`` at once while paused, or after the short timeouts when Redis
        fails."""
        if time.monotonic() < self.down_until:
            raise BrokerUnavailable(self.purpose)
        try:
            return work(self._connection())
        except Exception as exc:
            self._drop()
            self.down_until = time.monotonic() + self.pause
            logger.warning(
                "Redis unavailable for %s (%s); not trying again for %g s",
                self.purpose,
                exc,
                self.pause,
            )
            raise BrokerUnavailable(self.purpose) from exc

    def reset(self) -> None:
        """Try Redis again at the next call, on a new connection (tests, after an outage or
        a change of broker they made)."""
        self.down_until = 0.0
        self._drop()

    def _connection(self):
        """The kept connection, if it is this process's (a forked child must not share its
        parent's socket) and to the broker configured now; else a new one."""
        from celery import current_app as app

        kept = self._kept
        owner = (os.getpid(), app.conf.broker_url)
        if getattr(kept, "owner", None) != owner or kept.connection is None:
            kept.connection = app.connection_for_write(transport_options=QUICK_TRANSPORT_OPTIONS)
            kept.owner = owner
        return kept.connection

    def _drop(self) -> None:
        connection = getattr(self._kept, "connection", None)
        self._kept.connection = None
        if connection is not None and self._kept.owner[0] == os.getpid():
            try:
                connection.release()
            except Exception:  # already broken: nothing more to give back
                logger.debug("closing a broken %s connection failed", self.purpose)
