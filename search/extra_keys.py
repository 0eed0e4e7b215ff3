"""Extra keys to messages: other apps may point message search at messages it would not
find by their own words or vectors (memories point to the messages they came from), without
search importing them. An app registers a provider at start-up (``AppConfig.ready``).

A provider is called as ``provider(access, query, limit)`` and returns up to ``limit``
message ids, best first. Search keeps those in the caller's scope and filters, adds them to
the candidates, and ``ranking.score`` lifts each by ``(1 − relevance) × tuning.EXTRA_LIFT ×
RRF_K/(RRF_K + rank − 1)`` (its rank among these keys), after its own match and its
session's support: a key raises a message's relevance, never past 1.

Off unless the request asks (``memory_keys``) or ``SEARCH_MEMORY_KEYS`` is on.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.db import connection

from search.filters import message_where
from sessions.filters import Filters
from teams.access import Access

Provider = Callable[[Access, str, int], list[int]]
_providers: list[Provider] = []


def register(provider: Provider) -> None:
    """Adds ``provider`` once (``ready`` may run twice in tests)."""
    if provider not in _providers:
        _providers.append(provider)


def enabled(asked: bool | None) -> bool:
    return settings.SEARCH_MEMORY_KEYS if asked is None else asked


def candidates(access: Access, query: str, filters: Filters, limit: int) -> dict[int, int]:
    """Message id → session id, best first: every provider's finds (the first's first),
    those in ``access``'s scope and ``filters`` only."""
    ranked: list[int] = []
    for provider in _providers:
        ranked += [i for i in provider(access, query, limit) if i not in ranked]
    if not ranked:
        return {}
    where = message_where(access, filters)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT m.id, m.session_id FROM agent_sessions_message m"
            " JOIN agent_sessions_session s ON s.id = m.session_id"
            f" WHERE m.id = ANY(%s) AND {where.sql}",
            [ranked, *where.params],
        )
        found = dict(cursor.fetchall())
    return {i: found[i] for i in ranked if i in found}
