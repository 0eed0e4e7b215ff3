"""Run a piece of a search beside the rest, on a second database connection.

A hybrid search has two independent halves: the keyword side (SQL only) and the vector side
(embed the query, then SQL). Run one after the other they add up; on two cores, with
PostgreSQL doing the keyword work in one backend while this process embeds the query and
another backend scans vectors, the request takes about the longer of the two
(``bench/search_speed.py`` measures it). Later independent statements go the same way: the
keyword scores of the vector side's finds and the candidates' kinds beside the distances of
the keyword side's finds, the snippets beside the loading of the chosen messages
(``search/service.py``).

The second half runs in a small thread pool; each pool thread has its own Django connection
(connections are per thread), checked like a request's before each use. When the calling
connection is inside a transaction, another connection could not see its uncommitted rows,
so the work runs here, in order, instead (this is also what happens inside tests that wrap
each test in a transaction). ``SEARCH_CONCURRENCY = 0`` turns the pool off.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from functools import lru_cache
from typing import TypeVar

from django.conf import settings
from django.db import close_old_connections, connection

T = TypeVar("T")


@lru_cache(maxsize=1)
def _pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(
        max_workers=settings.SEARCH_CONCURRENCY, thread_name_prefix="search-beside"
    )


def beside(work: Callable[..., T], *args) -> Future[T]:
    """Start ``work(*args)`` beside the caller; ``.result()`` waits for it (and raises what
    it raised)."""
    if settings.SEARCH_CONCURRENCY and not connection.in_atomic_block:
        return _pool().submit(_on_own_connection, work, *args)
    done: Future[T] = Future()
    try:
        done.set_result(work(*args))
    except Exception as error:  # handed to .result(), as a pool thread would
        done.set_exception(error)
    return done


def shutdown() -> None:
    """Close the pool threads' database connections and stop the threads (a test that
    drops its database needs every connection to it closed)."""
    if _pool.cache_info().currsize == 0:
        return
    pool = _pool()
    _pool.cache_clear()
    workers = pool._max_workers
    # One task per thread: each waits until all are running, so every thread gets one.
    barrier = threading.Barrier(workers)

    def close() -> None:
        barrier.wait(timeout=10)
        connection.close()

    for done in [pool.submit(close) for _ in range(workers)]:
        done.result()
    pool.shutdown(wait=True)


def _on_own_connection(work: Callable[..., T], *args) -> T:
    close_old_connections()  # drop this thread's connection if it broke or aged out
    return work(*args)
