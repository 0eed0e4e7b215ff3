"""Whose the sessions and diary entries of a project archive are, on the way out and in
(docs/visibility.md).

On the way out, each session line carries its owner's username and its visibility
(``stamp``). On the way in (``of_record``), a session keeps its visibility and goes to the
member of the project's team with that username; when there is none here, to the person
who imports (None: the server's command, the team); a session of the team stays the
team's. A private session whose owner is nobody here stays private (nobody reads it; the
team's admins see it listed and may delete it): never made visible to the team by a move.
An archive from before visibility (no ``visibility``) is captured as any import by the
importer (``sessions.visibility.for_capture``).
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib.auth import get_user_model

from sessions.visibility import Ownership, for_capture
from teams.access import Access
from teams.models import Membership, Project, Visibility


def stamp(line: bytes, session) -> bytes:
    """The JSONL session line ``line`` with its session's owner (username) and visibility."""
    record = json.loads(line)
    record["owner"] = session.owner.get_username() if session.owner_id else None
    record["visibility"] = session.visibility
    return (json.dumps(record, ensure_ascii=False) + "\n").encode()


def member_id(project: Project, username: Any) -> int | None:
    """The id of the member of ``project``'s team called ``username``, or None."""
    if not isinstance(username, str) or not username:
        return None
    user = get_user_model().objects.filter(username=username).only("pk").first()
    if user is None:
        return None
    if not Membership.objects.filter(team_id=project.team_id, user_id=user.pk).exists():
        return None
    return user.pk


def of_record(record: dict[str, Any], project: Project, access: Access | None) -> Ownership:
    """Whose a session read from an archive's ``record`` is here."""
    visibility = record.get("visibility")
    if visibility not in Visibility.values:
        return for_capture(access, project)
    if record.get("owner") is None:
        return Ownership(None, visibility)  # the team's there, the team's here
    owner_id = member_id(project, record.get("owner"))
    if owner_id is None and visibility != Visibility.PRIVATE:
        owner_id = access.person_id if access is not None else None
    return Ownership(owner_id, visibility)
