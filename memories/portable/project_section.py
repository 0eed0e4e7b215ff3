"""A project's memories that no session carries, as a section of a project archive
(``sessions/portable/sections.py``): memories not tied to a session, in documents of
``BATCH`` memories (the shape of ``export.py``), then the links between memories of
different sessions (a session's own links travel with it). Read back by ``load.py``;
links follow memories that were renumbered on the way in."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from django.db.models import F, Q

from memories.capture.record import InvalidMemory, MemoryConflict, link
from memories.models import Memory, MemoryLink, MemoryStatus
from memories.portable.export import export_merged, to_yaml
from memories.portable.load import MAX_MEMORIES, MemoryFileError, import_files
from sessions.portable.sections import ProjectSection
from teams.access import Access
from teams.models import Project

NAME = "memories"
BATCH = min(1000, MAX_MEMORIES)


def export_project_memories(
    project: Project, access: Access | None = None
) -> Iterator[dict[str, Any]]:
    """The project's memories of no session and the links across sessions, those ``access``
    reads (None: all); a link is kept when its two ends are."""
    readable = Memory.objects.all() if access is None else access.scope(Memory.objects.all())
    loose = (
        Memory.objects.live()
        .filter(project=project, session__isnull=True, pk__in=readable.values("pk"))
        .order_by("pk")
    )
    ids = list(loose.values_list("pk", flat=True))
    for start in range(0, len(ids), BATCH):
        document = export_merged(Memory.objects.filter(pk__in=ids[start : start + BATCH]))
        if document:
            yield {"memories": document}
    # Links whose ends are not in one session (those travel with their session).
    across = (
        MemoryLink.objects.filter(source__project=project, target__project=project)
        .filter(source__in=readable, target__in=readable)
        .exclude(source__session__isnull=False, source__session=F("target__session"))
        # Both ends exported: live, and not of a session in the trash.
        .exclude(Q(source__status=MemoryStatus.DELETED) | Q(target__status=MemoryStatus.DELETED))
        .exclude(
            Q(source__session__deleted_at__isnull=False)
            | Q(target__session__deleted_at__isnull=False)
        )
        .order_by("pk")
        .values_list("source__public_id", "kind", "target__public_id")
    )
    batch: list[dict[str, str]] = []
    for source, kind, target in across.iterator(chunk_size=BATCH):
        batch.append({"source": source, "relationship": kind, "target": target})
        if len(batch) == BATCH:
            yield {"relationships": batch}
            batch = []
    if batch:
        yield {"relationships": batch}


def _relate(project: Project, links: Any, renumbered: dict[str, str]) -> int:
    if not isinstance(links, list):
        raise MemoryFileError("'relationships' must be a list", file=NAME)
    made = 0
    for index, entry in enumerate(links):
        where = f"relationships[{index}]"
        if not isinstance(entry, dict):
            raise MemoryFileError("each relationship must be an object", file=NAME, entry=where)
        ends = []
        for end in ("source", "target"):
            ref = renumbered.get(entry.get(end), entry.get(end))
            memory = Memory.objects.live().filter(project=project, public_id=ref).first()
            if memory is None:
                raise MemoryFileError(f"no memory {ref}", file=NAME, entry=where, field=end)
            ends.append(memory)
        try:
            link(ends[0], ends[1], str(entry.get("relationship")))
        except (InvalidMemory, MemoryConflict) as exc:
            raise MemoryFileError(str(exc), file=NAME, entry=where, field="relationship") from None
        made += 1
    return made


def load_project_memories(
    project: Project, records: Iterable[dict[str, Any]], context: dict[str, Any]
) -> dict[str, Any]:
    renumbered: dict[str, str] = context.setdefault("renumbered", {})
    summary = {"created": 0, "unchanged": 0, "relationships": 0}
    for record in records:
        if "memories" in record:
            files = {f"{NAME}.yaml": to_yaml(record["memories"]).encode()}
            imported = import_files(project, files)
            summary["created"] += len(imported.created)
            summary["unchanged"] += len(imported.unchanged)
            renumbered.update(imported.renumbered)
        if "relationships" in record:
            summary["relationships"] += _relate(project, record["relationships"], renumbered)
    return summary


SECTION = ProjectSection(NAME, export_project_memories, load_project_memories)
