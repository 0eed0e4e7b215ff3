"""Read a project archive (``export.py``) into a project, through the capture service
(``sessions/capture/service.py``): redaction, quota, keyword context and enrichment apply
to every message as they do to any capture.

First the whole archive is checked (``manifest.verify``: version, every member's
checksum) and nothing is written unless it passes. Then ``sessions.jsonl`` is read line by
line: a session's messages are captured in batches, its attachments (memories) loaded
once its messages are in, then the project sections are read.

Ids are remapped, never reused: each session gets a new public id here (found again by
its external id: the exported one, else the exported public id), each message keeps its
client id (``seq-<n>`` when it had none), memories keep their readable id when it is
free in the project, else get the next one (``renumbered``). So importing the same archive
twice changes nothing the second time, and an import that stopped halfway (a quota, a
power cut) completes when run again. Each batch commits on its own: a stopped import
leaves what it got through, never half a batch.
"""

from __future__ import annotations

import bisect
import io
import json
import zipfile
from array import array
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import transaction

from sessions.capture.service import capture_session
from sessions.models import Message, Session
from sessions.portable import attachments, ownership, sections
from sessions.portable.manifest import (
    PROJECT,
    SECTIONS_DIR,
    SESSIONS,
    ArchiveRefused,
    verify,
)
from sessions.visibility import Ownership
from teams.access import Access
from teams.models import Project
from transcripts._json import loads_json
from transcripts.base import ImportFormatError, ParsedMessage, ParsedSession
from transcripts.formats.memoryapp import message_from_record, session_from_record

MESSAGE_BATCH = 2000


@dataclass
class Imported:
    sessions_created: int = 0
    sessions_found: int = 0
    messages_added: int = 0
    duplicates: int = 0
    redactions: int = 0
    settings_applied: bool = False
    attachments: dict[str, int] = field(default_factory=dict)  # section → sessions with it
    skipped_sections: dict[str, int] = field(default_factory=dict)
    sections: dict[str, dict[str, Any]] = field(default_factory=dict)
    renumbered: dict[str, str] = field(default_factory=dict)
    # The archive's session ids → the ids they have here (sections follow sessions by them).
    session_ids: dict[str, str] = field(default_factory=dict)
    manifest: dict[str, Any] = field(default_factory=dict)


class _SeqMap(Mapping):
    """Exported seq → stored seq of one session, without holding its messages: the exported
    seqs in order (8 bytes each) and the seq the first of them has here. A session's
    messages are stored in export order, one after the other."""

    def __init__(self, source_seqs: array, start: int):
        self.source_seqs, self.start = source_seqs, start

    def __getitem__(self, seq: int) -> int:
        index = bisect.bisect_left(self.source_seqs, seq)
        if index == len(self.source_seqs) or self.source_seqs[index] != seq:
            raise KeyError(seq)
        return self.start + index

    def __iter__(self) -> Iterator[int]:
        return iter(self.source_seqs)

    def __len__(self) -> int:
        return len(self.source_seqs)


class _SessionImport:
    """One session of the archive on its way in: messages in batches, then attachments."""

    def __init__(
        self,
        project: Project,
        parsed: ParsedSession,
        result: Imported,
        archived_id: str = "",
        owned: Ownership | None = None,
    ):
        self.project, self.parsed, self.result = project, parsed, result
        self.owned = owned
        self.archived_id = archived_id
        self.batch: list[ParsedMessage] = []
        self.session: Session | None = None
        self.source_seqs = array("q")
        self.first_client_id = ""

    def add(self, message: ParsedMessage) -> None:
        if message.source_seq is not None:
            self.source_seqs.append(message.source_seq)
        if not self.first_client_id:
            self.first_client_id = message.client_id
        self.batch.append(message)
        if len(self.batch) >= MESSAGE_BATCH:
            self.flush()

    def flush(self) -> int:
        if self.batch or self.session is None:
            self.parsed.messages, self.batch = self.batch, []
            captured = capture_session(self.project, self.parsed, self.owned)
            if self.session is None:
                if captured.created:
                    self.result.sessions_created += 1
                else:
                    self.result.sessions_found += 1
            self.session = captured.session
            if self.archived_id:
                self.result.session_ids[self.archived_id] = captured.session.public_id
            self.result.messages_added += len(captured.added)
            self.result.duplicates += captured.duplicates
            self.result.redactions += captured.redactions
            return len(captured.added) + captured.duplicates
        return 0

    def attach(self, name: str, data: Any) -> None:
        self.flush()
        first = Message.objects.filter(session=self.session, client_id=self.first_client_id)
        start = first.values_list("seq", flat=True).first() or 0
        with transaction.atomic():
            report = attachments.load_all(
                self.session, {name: data}, _SeqMap(self.source_seqs, start)
            )
        for skipped in report.pop("skipped_sections", []):
            self.result.skipped_sections[skipped] = self.result.skipped_sections.get(skipped, 0) + 1
        for section, summary in report.items():
            self.result.attachments[section] = self.result.attachments.get(section, 0) + 1
            self.result.renumbered.update(summary.get("renumbered") or {})


def _lines(archive: zipfile.ZipFile, name: str) -> Iterator[tuple[int, dict[str, Any]]]:
    with archive.open(name) as raw:
        for number, line in enumerate(io.TextIOWrapper(raw, encoding="utf-8"), 1):
            if not line.strip():
                continue
            try:
                record = loads_json(line, line=number)
            except ImportFormatError as exc:
                raise ImportFormatError(f"{name}: {exc.message}", line=number) from None
            if not isinstance(record, dict):
                raise ImportFormatError(f"{name}: each line must be an object", line=number)
            yield number, record


def apply_settings(project: Project, archive: zipfile.ZipFile) -> None:
    document = json.loads(archive.read(PROJECT))
    known = {f.attname for f in Project._meta.concrete_fields}
    changed = [name for name in document.get("settings", {}) if name in known]
    for name in changed:
        setattr(project, name, document["settings"][name])
    project.full_clean(exclude=["team", "name", "slug"])
    project.save(update_fields=changed)


def import_archive(
    path: Path,
    project: Project,
    *,
    settings: bool,
    progress: Callable[[int], None] = lambda n: None,
    prepare: Callable[[], None] = lambda: None,
    access: Access | None = None,
) -> Imported:
    """Import the archive at ``path`` into ``project`` (its settings too when ``settings``),
    by ``access`` (None: the server's command): a new session keeps its archived owner and
    visibility where it can (``ownership.of_record``);
    ``ArchiveRefused`` before anything is written when the archive fails its checks,
    ``ImportFormatError`` (with the line) for a record that cannot be read. ``prepare``
    runs once the checks passed, before the first write (to create the project)."""
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ArchiveRefused(f"not a readable zip archive: {exc}") from None
    result = Imported()
    with archive:
        result.manifest = verify(archive)
        prepare()
        if settings:
            apply_settings(project, archive)
            result.settings_applied = True
        current: _SessionImport | None = None
        for number, record in _lines(archive, SESSIONS):
            kind = record.get("type")
            if kind == "session":
                if current is not None:
                    current.flush()
                parsed = session_from_record(record, line=number)
                owned = ownership.of_record(record, project, access)
                current = _SessionImport(
                    project, parsed, result, str(record.get("id") or ""), owned
                )
            elif current is None:
                raise ImportFormatError(
                    f"{SESSIONS}: a {kind!r} line before any session", line=number
                )
            elif kind == "message":
                current.add(message_from_record(record, line=number))
                progress(1)
            elif kind == "attachment":
                current.attach(str(record.get("name")), record.get("data"))
            else:
                raise ImportFormatError(f"{SESSIONS}: unknown record type {kind!r}", line=number)
        if current is not None:
            current.flush()
        context: dict[str, Any] = {
            "renumbered": result.renumbered,
            "session_ids": result.session_ids,
        }
        for name in sorted(result.manifest["members"]):
            if not name.startswith(SECTIONS_DIR):
                continue
            section_name = name[len(SECTIONS_DIR) :].removesuffix(".jsonl")
            section = sections.get(section_name)
            if section is None:
                result.skipped_sections[section_name] = 1
                continue
            records = (record for _, record in _lines(archive, name))
            with transaction.atomic():
                result.sections[section_name] = section.load(project, records, context)
    return result
