"""Projects by working directory (docs/api.md, same heading), on the server's side.

A request names a working directory by a ``project`` value that is a path or a slug, or by
the ``X-Memoryapp-Directory`` header (``protocol.directories``, which makes the slug the
same way on every client). The project is the team's one whose ``directory`` is that slug;
``project_for_directory`` creates it on first use, race-safe.
"""

from __future__ import annotations

import urllib.parse

from django.db import IntegrityError, transaction
from django.utils.text import slugify
from rest_framework import exceptions

from protocol.directories import DIRECTORY_HEADER, is_directory, project_slug
from teams.models import DIRECTORY_MAX_LENGTH, Project, Team

__all__ = ["DIRECTORY_HEADER", "directory_of", "header_directory", "project_for_directory"]

# Project.name and Project.slug hold 100 characters; a longer directory keeps its end.
NAME_LENGTH = 100


def directory_of(reference: str, field: str = "project") -> str | None:
    """The slug a ``project`` value names, or None when it is 'team/project' or an id.
    400 (naming ``field``) for a directory no project could keep."""
    reference = reference.strip()
    if not reference or not is_directory(reference):
        return None
    slug = project_slug(reference)
    if len(slug) > DIRECTORY_MAX_LENGTH:
        raise exceptions.ValidationError(
            {field: f"a working directory of at most {DIRECTORY_MAX_LENGTH} characters"}
        )
    if any(ord(c) < 32 for c in slug):
        raise exceptions.ValidationError({field: "a working directory without control characters"})
    return slug


def header_directory(request) -> str | None:
    """The working directory a request's header names (any path or slug), or None."""
    # Percent-encoded UTF-8 (protocol.directories.header_value): headers are Latin-1.
    value = urllib.parse.unquote(request.headers.get(DIRECTORY_HEADER, "")).strip()
    if not value:
        return None
    if not is_directory(value):
        value = "-" + value  # a header only ever names a directory
    return directory_of(value, field=DIRECTORY_HEADER)


def _tail(text: str, length: int) -> str:
    return text if len(text) <= length else "…" + text[-(length - 1) :]


def _slugs(directory: str):
    """Project slugs to try for a new directory's project: its own, then numbered."""
    base = (slugify(directory)[-(NAME_LENGTH - 4) :].strip("-")) or "project"
    yield base
    for n in range(2, 100):
        yield f"{base}-{n}"


def project_for_directory(team: Team, directory: str, *, create: bool) -> Project | None:
    """The team's project of ``directory``; with ``create``, made when missing. Two
    requests creating it at once get the same project: the unique (team, directory)
    constraint lets one insert win, and the other reads the winner's row."""
    found = Project.objects.filter(team=team, directory=directory).first()
    if found is not None or not create:
        return found
    for slug in _slugs(directory):
        try:
            with transaction.atomic():
                return Project.objects.create(
                    team=team, directory=directory, slug=slug, name=_tail(directory, NAME_LENGTH)
                )
        except IntegrityError:
            found = Project.objects.filter(team=team, directory=directory).first()
            if found is not None:
                return found  # created meanwhile by another request
            # else the slug is another project's: try the next
    raise exceptions.ValidationError(
        {"project": f"too many projects are named like {directory!r}; name one ('team/project')"}
    )
