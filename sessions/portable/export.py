"""Write a project archive: a zip holding ``project.json`` (the project's settings and
policy), ``sessions.jsonl`` (every live session as the JSONL session export writes it:
its ``session`` line, its ``message`` lines, its ``attachment`` lines), one
``sections/<name>.jsonl`` per registered project section, and ``manifest.json`` (format
version, and each member's SHA-256, size and record count), written last.

Who it is for (docs/visibility.md): ``access``, the admin who downloads it from the UI,
gets what they read: the team's sessions (their messages, memories and diary) and their own
of any visibility; a teammate's 'summary' or 'private' session is left out whole (its
messages are not theirs to read, and a session without them would not import as one).
Without ``access`` (``manage.py export_project``, run by whoever runs the server) every
session is in. Each session line names its owner and visibility, so an import keeps them
(``ownership.py``).

Everything streams: sessions are read in id order and their messages through a
server-side cursor, each line compressed into the archive as it is made, so memory stays
flat however many messages the project holds. Sessions in the trash are left out (they
are on their way out; restore one first to keep it).
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from sessions.models import KEYWORD_VECTORS, Message, Session
from sessions.portable import attachments, ownership, sections
from sessions.portable.manifest import PROJECT, SECTIONS_DIR, SESSIONS, Member, manifest
from sessions.portable.session_export import iter_export
from teams.access import Access
from teams.models import Project

# The project's own columns that are not settings: who it is, not how it behaves.
IDENTITY = {"id", "team", "name", "slug", "created_at"}
SESSION_BATCH = 100
MESSAGE_BATCH = 2000


@dataclass
class Exported:
    sessions: int = 0
    messages: int = 0
    sections: dict[str, int] = field(default_factory=dict)
    bytes: int = 0


def project_settings(project: Project) -> dict[str, Any]:
    """The project's settings and policy: every plain column but its identity."""
    return {
        f.attname: getattr(project, f.attname)
        for f in Project._meta.concrete_fields
        if f.name not in IDENTITY and not f.is_relation
    }


def _messages(session: Session, counted: Callable[[], None]) -> Iterator[Message]:
    rows = (
        Message.objects.filter(session=session)
        .defer(*KEYWORD_VECTORS)  # large, and not exported
        .order_by("seq")
        .iterator(chunk_size=MESSAGE_BATCH)  # a server-side cursor
    )
    for message in rows:
        yield message
        counted()


def write_archive(
    project: Project,
    path: Path | IO[bytes],
    *,
    progress: Callable[[int], None] = lambda n: None,
    access: Access | None = None,
) -> Exported:
    """Write ``project`` to ``path`` (or an open, seekable binary file): what ``access``
    reads of it (None: all of it); ``progress(n)`` hears of each message written."""
    result = Exported()
    members: list[Member] = []

    def count_message() -> None:
        result.messages += 1
        progress(1)

    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, allowZip64=True) as archive:
        member = Member(PROJECT)
        members.append(member)
        body = {"name": project.name, "slug": project.slug, "settings": project_settings(project)}
        archive.writestr(PROJECT, member.add(json.dumps(body, ensure_ascii=False).encode()))

        member = Member(SESSIONS)
        members.append(member)
        live = Session.objects.filter(project=project, deleted_at__isnull=True).order_by("pk")
        if access is not None:
            live = access.scope(live)  # what it reads all of (Reading.CONTENT)
        with archive.open(SESSIONS, "w", force_zip64=True) as out:
            rows = live.select_related("project", "owner").iterator(chunk_size=SESSION_BATCH)
            for session in rows:
                found = attachments.collect(session, access)
                chunks = iter_export(session, _messages(session, count_message), "jsonl", found)
                out.write(member.add(ownership.stamp(next(chunks), session)))
                for line in chunks:  # one record per line
                    out.write(member.add(line))
                result.sessions += 1

        for section in sections.registered():
            name = f"{SECTIONS_DIR}{section.name}.jsonl"
            member = Member(name)
            members.append(member)
            with archive.open(name, "w", force_zip64=True) as out:
                for record in section.export(project, access):
                    out.write(member.add((json.dumps(record, ensure_ascii=False) + "\n").encode()))
            result.sections[section.name] = member.records

        written = manifest(
            members,
            created_at=datetime.now(UTC).isoformat().replace("+00:00", "Z"),
            source={"team": project.team.slug, "project": project.slug},
            counts={"sessions": result.sessions, "messages": result.messages},
        )
        archive.writestr("manifest.json", written)
    result.bytes = path.stat().st_size if isinstance(path, Path) else path.tell()
    return result
