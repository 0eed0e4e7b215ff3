"""The short-term buffer (docs/people.md): a person's last events, to put in a
prompt as "recent context".

The last ``lastn`` messages across the person's most recent sessions (optionally with one
character), newest last, and a one-paragraph extractive summary of them
(``sessions/enrich/summary``: no model, no network). Removed messages are left out; a person
with no sessions the caller may see has no events.
"""

from __future__ import annotations

from dataclasses import dataclass

from sessions.enrich.summary import summarize
from sessions.models import Message, Session
from teams.access import Access

MAX_LASTN = 500
DEFAULT_LASTN = 20
SUMMARY_CHARS = 600


@dataclass
class Recent:
    events: list[Message]
    summary: str


def person_sessions(access: Access, person: str, character: str = ""):
    """The sessions of ``person`` (with ``character``) that ``access`` sees, not in the trash."""
    sessions = access.scope(Session.objects.alive()).filter(user_name=person)
    if character:
        sessions = sessions.filter(agent_name=character.strip().lower())
    return sessions


def recent_events(access: Access, person: str, lastn: int, character: str = "") -> Recent:
    """The last ``lastn`` events of ``person``, oldest first, with their summary."""
    # The messages of at most ``lastn`` sessions can hold the last ``lastn`` messages.
    sessions = person_sessions(access, person, character).order_by("-started_at", "-id")
    session_ids = list(sessions.values_list("pk", flat=True)[:lastn])
    newest_first = (
        Message.objects.filter(session_id__in=session_ids, removed_at__isnull=True)
        .select_related("session")
        .order_by("-session__started_at", "-session_id", "-seq")[:lastn]
    )
    events = list(reversed(newest_first))
    return Recent(events, summarize(events, max_chars=SUMMARY_CHARS) if events else "")
