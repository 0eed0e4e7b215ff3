"""Who reads a session: its owner and visibility, chosen at capture and changed later
(docs/visibility.md). Reading is decided in one place, ``teams.access.Access.scope``; this
module decides what a capture gets and who may change it, and tells what is derived from a
session (``sessions.derived.visibility_changed``) when it changes.

- At capture: what the capture asks for, else its token's default, else its project's; the
  owner is the person the caller reads as (``Access.person_id``). A session with no owner
  (a team token's) belongs to the team and cannot be private: asked for, that is refused;
  by default, it is 'summary' (its messages stay unread by the team, as the default meant).
- Later: the owner makes it anything the project allows; an admin of the team only less
  visible (a retention or privacy request); nobody else changes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from core.error_codes import ErrorCode
from core.errors import DomainError
from sessions import derived
from sessions.models import Session
from teams.access import Access
from teams.models import VISIBILITY_RANK, Project, Role, Visibility


class VisibilityError(DomainError):
    """A visibility that is unknown, not allowed here, or not the caller's to give."""

    code = ErrorCode.VALIDATION_ERROR

    def __init__(self, message: str, *, status: int = 400):
        super().__init__(message)
        self.status = status
        if status == 403:
            self.code = ErrorCode.PERMISSION_DENIED

    def body(self) -> dict[str, Any]:
        return {"detail": str(self), "visibility": [str(self)]}


@dataclass(frozen=True)
class Ownership:
    """Whose a new session is, and who reads it."""

    owner_id: int | None
    visibility: str

    def may_extend(self, session: Session) -> bool:
        """Whether a capture with this ownership may add to ``session``, found again by its
        external id: the team's sessions, and its own (not a teammate's private or summary
        one, whose messages it may not read)."""
        return session.visibility == Visibility.TEAM or session.owner_id == self.owner_id


def checked(value: str) -> str:
    """``value`` as a visibility, or a 400 naming the choices."""
    if value not in Visibility.values:
        raise VisibilityError(
            f"unknown visibility {value!r}; choose one of {', '.join(Visibility.values)}"
        )
    return value


def _allowed(project: Project, visibility: str) -> str:
    if visibility not in project.allowed_visibilities:
        raise VisibilityError(
            f"project {project} does not allow {visibility!r} sessions; it allows "
            f"{', '.join(project.allowed_visibilities)}"
        )
    return visibility


def for_capture(access: Access | None, project: Project, asked: str | None = None) -> Ownership:
    """What a new session captured by ``access`` (None: a command run on the server, for the
    team) into ``project`` gets; ``asked`` is the capture's own choice."""
    owner_id = access.person_id if access is not None else None
    token = access.token if access is not None else None
    if asked:
        visibility = _allowed(project, checked(asked))
        if visibility == Visibility.PRIVATE and owner_id is None:
            raise VisibilityError(
                "a session captured by a token that acts for no person belongs to the team "
                "and cannot be private; use a token made for a person (create_api_token "
                "--for USER, or the tokens page) or ask for 'summary'"
            )
        return Ownership(owner_id, visibility)
    token_default = token.default_visibility if token is not None else ""
    if token_default and token_default not in project.allowed_visibilities:
        raise VisibilityError(
            f"this API token's default visibility {token_default!r} is not allowed in project "
            f"{project}, which allows {', '.join(project.allowed_visibilities)}: send "
            "'visibility' with the capture, or use another token"
        )
    visibility = token_default or project.default_visibility
    if visibility == Visibility.PRIVATE and owner_id is None:
        visibility = Visibility.SUMMARY
    return Ownership(owner_id, visibility)


def may_change(access: Access, row, visibility: str, noun: str = "session") -> str | None:
    """Why ``access`` may not give ``row`` (a session, or a memory: ``noun``) this
    visibility (None: it may). The one rule for both: its owner gives any, an admin of the
    team only a less visible one, nobody else any."""
    if access.owns(row):
        return None
    if not access.can(Role.ADMIN, row.team_id):
        return (
            f"only the {noun}'s owner changes its visibility (an admin of the team may make "
            "it less visible)"
        )
    if VISIBILITY_RANK[Visibility(visibility)] > VISIBILITY_RANK[Visibility(row.visibility)]:
        return (
            f"an admin may make a {noun} less visible, not more: {row.public_id} is "
            f"{row.visibility!r}; only its owner makes it {visibility!r}"
        )
    return None


def giveable(access: Access, row, noun: str = "session") -> list[str]:
    """The visibilities ``access`` may give ``row`` (a session or a memory; its current one
    among them): those its project allows, never private without an owner, and only as
    ``may_change`` says. What a page offers; ``change`` refuses the rest."""
    return [
        v
        for v in Visibility.values
        if v in row.project.allowed_visibilities
        and not (v == Visibility.PRIVATE and row.owner_id is None)
        and may_change(access, row, v, noun) is None
    ]


def change(access: Access, sessions: list[Session], visibility: str) -> list[Session]:
    """Give every one of ``sessions`` (rows the caller may list) ``visibility``: all or
    none, checked first; returns those that changed. What is derived from them follows."""
    visibility = checked(visibility)
    for session in sessions:
        _allowed(session.project, visibility)
        if visibility == Visibility.PRIVATE and session.owner_id is None:
            raise VisibilityError(
                f"session {session.public_id} belongs to the team (no owner) and cannot be private"
            )
        refusal = may_change(access, session, visibility)
        if refusal:
            raise VisibilityError(refusal, status=403)
    changing = [s for s in sessions if s.visibility != visibility]
    if not changing:
        return []
    with transaction.atomic():
        Session.objects.filter(pk__in=[s.pk for s in changing]).update(
            visibility=visibility, updated_at=timezone.now()
        )
        derived.visibility_changed([s.pk for s in changing])
    for session in changing:
        session.visibility = visibility
    return changing
