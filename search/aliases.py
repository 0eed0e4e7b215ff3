"""A question that names someone as the conversation does finds that speaker's messages.

The aliases are learned per project (``sessions/enrich/aliases.py``): "Kate" for the author
"katherine.s", "Winston" for the agent ``architect``. A message's keyword context holds its
own speaker's name (``sessions/capture/keyword_context.py``), so the keyword side lets a
query word that is an alias also match its speaker's name: "kate" becomes
``('kate' | 'katherine.s')`` in the tsquery, scored and weighted as one word. Only the aliases
of the caller's scope apply (its teams, and its projects when narrowed): another team's
aliases never change a query. One indexed lookup per search, by the query's words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.db import connection

from search.filters import team_condition
from sessions.enrich.aliases import USABLE
from sessions.models import SEARCH_CONFIG, SpeakerAlias
from teams.access import Access

MAX_WORDS = 32
MAX_EXPANSIONS = 8
SEMANTIC_WITH_SPEAKERS = True
_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)?")


@dataclass(frozen=True)
class Expansion:
    alias: str  # as the query wrote it
    lexeme: str  # the alias as a query lexeme
    speaker: str  # the display name (or agent name) it stands for
    speaker_query: str  # the speaker's name as tsquery text ('katherin' <-> 'smith')


def expansions(access: Access, text: str) -> tuple[Expansion, ...]:
    """The aliases of the caller's scope that ``text`` uses, with their speakers."""
    words = list(dict.fromkeys(w.lower() for w in _WORD.findall(text or "")))[:MAX_WORDS]
    if not words or not access.team_ids:
        return ()
    teams, team_params = team_condition(access, "a")
    projects, project_params = "TRUE", []
    if access.project_ids is not None:
        projects, project_params = "a.project_id = ANY(%s)", [list(access.project_ids)]
    sql = (
        f"SELECT a.alias_key, tsvector_to_array(to_tsvector('{SEARCH_CONFIG}', a.alias)),"
        f" a.speaker, phraseto_tsquery('{SEARCH_CONFIG}', a.speaker)::text"
        f" FROM {SpeakerAlias._meta.db_table} a"
        f" WHERE {teams} AND {projects} AND a.alias_key = ANY(%s) AND a.evidence >= %s"
        " ORDER BY a.evidence DESC, a.id LIMIT %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [*team_params, *project_params, words, USABLE, MAX_EXPANSIONS])
        rows = cursor.fetchall()
    return tuple(
        Expansion(alias, lexemes[0], speaker, speaker_query)
        for alias, lexemes, speaker, speaker_query in rows
        if len(lexemes) == 1 and speaker_query
    )


def keyword_alternatives(found: tuple[Expansion, ...]) -> tuple[tuple[str, str], ...]:
    """(query lexeme, tsquery text it also matches) for ``keyword.parse``."""
    return tuple((e.lexeme, e.speaker_query) for e in found)


def semantic_text(text: str, found: tuple[Expansion, ...]) -> str:
    """What the vector side embeds: the query as asked, or with its aliases replaced by
    their speakers' names (``SEMANTIC_WITH_SPEAKERS``)."""
    return with_speakers(text, found) if SEMANTIC_WITH_SPEAKERS and found else text


def with_speakers(text: str, found: tuple[Expansion, ...]) -> str:
    """The query with each alias replaced by its speaker's name (the first, when one alias
    names several people)."""
    names = {}
    for e in found:
        names.setdefault(e.alias, e.speaker)
    if not names:
        return text
    return _WORD.sub(lambda m: names.get(m.group(0).lower(), m.group(0)), text)
