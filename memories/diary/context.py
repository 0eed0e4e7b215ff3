"""The diary in the agent context: when a task asks about a person ("what do I know about
Sam?") — the context's ``person`` filter, or a person with diary entries named in the
query — their diary entries come first, newest day first, within the budget.

Registered into search's context (``search/context_sections.py``) before the memories'
sections, at relevance 1, so the section goes before everything else. With the ``agent``
filter too, that character's entries and the person's ``_shared`` ones.
"""

from __future__ import annotations

import re

from memories.diary.query import narrowed, visible
from search.context_sections import Section, SectionRequest
from sessions.embedding.tokens import count_tokens
from sessions.enrich.text import STOPWORDS
from teams.access import Access

MAX_ENTRIES = 14
MAX_PEOPLE = 1000  # distinct people looked for in a query
# Names that are also everyday words ("me", "user") would match most queries: such a
# person's diary comes into the context only through the person filter.
NOT_NAMES = STOPWORDS | {"user", "assistant", "agent", "human", "system", "person", "default"}


def diary_sections(request: SectionRequest) -> list[Section]:
    person = request.filters.person or named_person(request.access, request.query)
    if not person:
        return []
    entries = narrowed(visible(request.access), person=person, character=request.filters.agent)
    entries = entries.order_by("-day", "character").only("text", "day", "character", "person")
    heading = f"## Diary: {person}"
    lines, budget = [heading], request.budget - count_tokens([heading])[0]
    shown = []
    candidates = list(entries[:MAX_ENTRIES])
    costs = count_tokens(["\n\n" + _demoted(e.text) for e in candidates]) if candidates else []
    for entry, cost in zip(candidates, costs, strict=True):
        if cost > budget:
            break
        lines.append(_demoted(entry.text))
        budget -= cost
        shown.append(str(entry))
    if not shown:
        return []
    markdown = "\n\n".join(lines)
    return [Section(heading, markdown, 1.0, request.budget - budget, shown)]


def named_person(access: Access, query: str) -> str:
    """The person with diary entries whose name the query says as a word, the longest name
    first ("Sam Lee" before "Sam"); "" for none. Names that are everyday words (``NOT_NAMES``)
    are not looked for."""
    if not query.strip():
        return ""
    people = (visible(access).order_by("person").values_list("person", flat=True).distinct())[
        :MAX_PEOPLE
    ]
    text = query.casefold()
    for person in sorted(people, key=len, reverse=True):
        if len(person) < 2 or person.casefold() in NOT_NAMES:
            continue
        if re.search(rf"(?<!\w){re.escape(person.casefold())}(?!\w)", text):
            return person
    return ""


def _demoted(text: str) -> str:
    """An entry's headings one level down, under the section's own "## " heading."""
    return re.sub(r"^(#+) ", r"#\1# ", text.strip(), flags=re.MULTILINE)
