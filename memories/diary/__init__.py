"""People's diaries (docs/people.md): one entry per person, character and day, distilled from the
day's sessions and memories (``distill``), embedded and searchable (``search``), rendered as
Markdown (``render``) and exported as ``diary/<person>/<char>/YYYY-MM-DD.md`` (``export``),
and put first in the agent context when a task asks about a person (``context``).

The short-term buffer beside it (``recent``) gives the last events of a person's sessions.

Who is who: the person is ``Session.user_name``; the character is ``Session.agent_name``
(the character; ``agent_persona`` is how the character presents itself, free text).
"""
