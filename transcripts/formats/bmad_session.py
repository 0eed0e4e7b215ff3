"""BMAD session folders (docs/api.md, import formats), zipped: ``<session-id>/conversation.md``
with ``metadata.yaml`` and the memory files beside it.

Choices:

* **Folders.** Every folder of the archive holding a ``conversation.md`` is one session
  (``conversation_md.py`` reads it); several folders give several sessions.
* **metadata.yaml** (``session:``): ``id`` → ``external_id`` when the transcript names none;
  ``created_at`` → ``started_at`` when the transcript has no start; ``context.tags`` →
  ``topics``; ``context.project_name``/``project_phase``/``primary_topic`` → metadata.
* **Memory files** (``decisions.yaml``, ``findings.yaml``, ``preferences.yaml``,
  ``learnings.yaml``, ``facts.yaml``, ``agent-states/*.yaml``, ``relationships.yaml``) are
  kept as text in ``metadata["memory_files"]`` (path within the folder → YAML): sessions
  never make memories; the memories app reads them when it extracts the session. Their
  YAML must parse (an error names the file and line); their fields are checked there.
"""

from __future__ import annotations

import io
import posixpath
import zipfile
from typing import Any

import yaml

from .._common import parse_timestamp
from .._text import decode_text
from ..base import ImportFormatError, ParsedSession, UnzipLimits
from ..format import Format, Recognition
from .anthropic_session import unzip
from .conversation_md import parse_conversation_md

NAME = "bmad_session"
CONVERSATION = "conversation.md"
METADATA_YAML = "metadata.yaml"
MEMORY_FILES = (
    "decisions.yaml",
    "findings.yaml",
    "preferences.yaml",
    "learnings.yaml",
    "facts.yaml",
    "relationships.yaml",
)

AGENT_STATES = "agent-states"


def _relative(path: str) -> tuple[str, str] | None:
    """(folder, path within it) of a file of a session folder, or None for other files."""
    path = path.replace("\\", "/")
    if "__MACOSX" in path:
        return None
    folder, base = posixpath.split(path)
    if base in (CONVERSATION, METADATA_YAML, *MEMORY_FILES):
        return folder, base
    parent, states = posixpath.split(folder)
    if states == AGENT_STATES and base.endswith((".yaml", ".yml")):
        return parent, f"{AGENT_STATES}/{base}"
    return None


def is_bmad_archive(data: bytes) -> bool:
    """A zip archive with a ``conversation.md`` in it (its directory is read, nothing more)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return any(posixpath.basename(n) == CONVERSATION for n in archive.namelist())
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError):
        return False


def parse_bmad_session(
    data: bytes, *, unzip_limits: UnzipLimits | None = None
) -> list[ParsedSession]:
    """Session folders from a zip archive (read within ``unzip_limits``), or the bytes of a
    lone ``conversation.md`` (a folder with nothing else)."""
    raw = bytes(data)
    if not raw.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return [_session("", {CONVERSATION: raw})]
    files = unzip(raw, unzip_limits or UnzipLimits(), wanted=lambda p: bool(_relative(p)))
    folders: dict[str, dict[str, bytes]] = {}
    for path, content in files.items():
        folder, name = _relative(path)
        folders.setdefault(folder, {})[name] = content
    sessions = [_session(folder, parts) for folder, parts in sorted(folders.items())]
    sessions = [s for s in sessions if s is not None]
    if not sessions:
        raise ImportFormatError(f"no {CONVERSATION} found in the archive")
    return sessions


def _yaml(where: str, content: bytes) -> Any:
    try:
        return yaml.safe_load(decode_text(content))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        raise ImportFormatError(
            f"{where}: not valid YAML: {problem}",
            line=mark.line + 1 if mark is not None else None,
            field=where,
        ) from None


def _session(folder: str, parts: dict[str, bytes]) -> ParsedSession | None:
    if CONVERSATION not in parts:
        return None
    try:
        [session] = parse_conversation_md(parts.pop(CONVERSATION))
    except ImportFormatError as exc:
        exc.field = exc.field or posixpath.join(folder, CONVERSATION)
        raise
    metadata = parts.pop(METADATA_YAML, None)
    if metadata is not None:
        _apply_metadata(session, _yaml(posixpath.join(folder, METADATA_YAML), metadata))
    memory_files = {}
    for name, content in sorted(parts.items()):
        _yaml(posixpath.join(folder, name), content)  # a broken file is refused now
        memory_files[name] = decode_text(content)
    if memory_files:
        session.metadata["memory_files"] = memory_files
    session.source_format = NAME
    session.external_id = session.external_id or posixpath.basename(folder)
    return session


def _apply_metadata(session: ParsedSession, document: Any) -> None:
    described = document.get("session") if isinstance(document, dict) else None
    if not isinstance(described, dict):
        return
    if not session.external_id and isinstance(described.get("id"), str):
        session.external_id = described["id"]
    created = described.get("created_at")
    if session.started_at is None and isinstance(created, str):
        session.started_at = parse_timestamp(created, field="created_at")
    context = described.get("context")
    if isinstance(context, dict):
        tags = context.get("tags")
        if isinstance(tags, list):
            session.topics = [str(tag) for tag in tags if str(tag).strip()]
        for key in ("project_name", "project_phase", "primary_topic"):
            if isinstance(context.get(key), str):
                session.metadata[key] = context[key]


def _claims_archive(data: bytes) -> int:
    return 2 if is_bmad_archive(data) else 0


FORMAT = Format(
    name=NAME,
    position=8,
    description="BMAD session folders, zipped (conversation.md, metadata.yaml, memory files)",
    documentation=(
        "a zip of BMAD session folders, each with `conversation.md` (read as "
        "`conversation_md`), `metadata.yaml` (the session id, start, tags) and its memory files"
        " (`decisions.yaml`, `findings.yaml`, `preferences.yaml`, `agent-states/*.yaml`, …), "
        "which become the session's memories when it is extracted "
        "([memories.md](memories.md#what-an-imported-transcript-states))"
    ),
    parse=parse_bmad_session,
    recognition=Recognition(archive=_claims_archive),
    label="BMAD session folder",
)


__all__ = ["is_bmad_archive", "parse_bmad_session"]
