"""Project-level sections of a project archive that other apps write and read back,
without sessions importing them: an app registers a ``ProjectSection`` at start-up (its
``AppConfig.ready``). Memories not tied to a session, and the links between memories of
different sessions, are one (``memories/portable/project_section.py``); person diaries are
another (``memories/diary/archive_section.py``).

``export(project, access)`` yields JSON-native records (only what ``access`` reads, through
``teams.access.Access.scope``; None: the server's own export, every row), written one per line to
``sections/<name>.jsonl`` (so a section of any size streams); ``load(project, records,
context)`` reads them back after every session is in and returns a summary (counts).
``context`` is shared by the whole import: ``renumbered`` maps a section's own id to the
id it got here where they differ (memory ids, for instance), so later records can follow,
and ``session_ids`` maps each archived session's public id to the one it has here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from teams.access import Access
from teams.models import Project


@dataclass(frozen=True)
class ProjectSection:
    name: str
    export: Callable[[Project, Access | None], Iterator[dict[str, Any]]]
    load: Callable[[Project, Iterable[dict[str, Any]], dict[str, Any]], dict[str, Any]]


_sections: dict[str, ProjectSection] = {}


def register(section: ProjectSection) -> None:
    """Adds ``section`` (once: ``ready`` may run twice in tests)."""
    _sections[section.name] = section


def registered() -> list[ProjectSection]:
    return list(_sections.values())


def get(name: str) -> ProjectSection | None:
    return _sections.get(name)
