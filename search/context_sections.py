"""Sections other apps add to the agent context (``search/context.py``), without search
importing them: an app registers a provider at start-up (its ``AppConfig.ready``), and
``build_context`` asks every provider for its sections within the budget it has left.

A provider is called as ``provider(request)`` with a ``SectionRequest`` and returns a list
of ``Section``: Markdown under its own "## " heading, how relevant it is to the query
(0..1, on message search's scale; 1 when there is no query), and its tokens
(``sessions/embedding/tokens.py``). It must keep within ``request.budget`` and, when
``request.touch``, count what it returned as read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from sessions.filters import Filters
from teams.access import Access


@dataclass(frozen=True)
class SectionRequest:
    access: Access
    query: str  # "" for "where we are": no query, the project's current state
    filters: Filters
    agent: str  # the agent asking ("" when unknown)
    budget: int  # tokens
    min_relevance: float = 0.0
    include_archived: bool = False
    touch: bool = True


@dataclass
class Section:
    heading: str  # "## Decisions"
    markdown: str  # the heading and its lines
    relevance: float
    tokens: int
    ids: list[str]  # the readable ids of what it shows (DEC-002 …)


Provider = Callable[[SectionRequest], list[Section]]
_providers: list[Provider] = []


def register(provider: Provider) -> None:
    """Adds ``provider`` once (``ready`` may run twice in tests)."""
    if provider not in _providers:
        _providers.append(provider)


def sections(request: SectionRequest) -> list[Section]:
    """Every provider's sections, most relevant first, within ``request.budget`` in all."""
    found: list[Section] = []
    budget = request.budget
    for provider in _providers:
        if budget <= 0:
            break
        for section in provider(replace(request, budget=budget)):
            if section.tokens <= budget:
                found.append(section)
                budget -= section.tokens
    return sorted(found, key=lambda s: -s.relevance)
