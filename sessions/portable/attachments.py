"""Sections other apps keep about a session (its memories; diaries later), exported with it
and read back on import, without sessions importing those apps: an app registers a
``Section`` at start-up (its ``AppConfig.ready``), as memories does in ``memories/apps.py``.

``export(session, access)`` returns the section as JSON-native data (None when the session
has none), holding only what ``access`` reads (``teams.access.Access.scope``; None: the
server itself, every row); ``load(session, data, seq_of)`` writes it into the imported
``session`` and returns a summary (counts). ``seq_of`` maps a message's seq in the exported
session to its seq in the imported one (they differ where the source had gaps, or the
session held messages already).
``load`` runs inside the import's transaction: an error rolls the whole import back.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from sessions.models import Message, Session
from teams.access import Access
from transcripts.base import ParsedSession


@dataclass(frozen=True)
class Section:
    name: str
    export: Callable[[Session, Access | None], Any]
    load: Callable[[Session, Any, Mapping[int, int]], dict[str, Any]]


_sections: dict[str, Section] = {}


def register(section: Section) -> None:
    """Adds ``section`` (once: ``ready`` may run twice in tests)."""
    _sections[section.name] = section


def collect(session: Session, access: Access | None = None) -> dict[str, Any]:
    """Every registered section that ``session`` has, by name: what ``access`` reads of it
    (None: all of it, for the server's own exports)."""
    found = {}
    for name, section in _sections.items():
        data = section.export(session, access)
        if data is not None:
            found[name] = data
    return found


def seq_map(session: Session, parsed: ParsedSession) -> dict[int, int]:
    """Exported seq → stored seq, matched by the messages' client ids."""
    by_client = {m.client_id: m.source_seq for m in parsed.messages if m.source_seq is not None}
    stored = Message.objects.filter(session=session, client_id__in=list(by_client))
    return {by_client[client_id]: seq for client_id, seq in stored.values_list("client_id", "seq")}


def load_all(session: Session, attachments: dict[str, Any], seq_of: Mapping[int, int]) -> dict:
    """Write ``attachments`` into ``session``: name → what its loader reports. A section no
    app here registered (an export from a newer instance) is skipped and counted, never an
    error."""
    report: dict[str, Any] = {}
    for name, data in attachments.items():
        section = _sections.get(name)
        if section is None:
            report.setdefault("skipped_sections", []).append(name)
            continue
        report[name] = section.load(session, data, seq_of)
    return report


def load_parsed(session: Session, parsed: ParsedSession) -> dict[str, Any]:
    """``load_all`` for a session read whole from one file."""
    if not parsed.attachments:
        return {}
    return load_all(session, parsed.attachments, seq_map(session, parsed))
