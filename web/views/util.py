"""Small helpers the page modules share."""

from __future__ import annotations

from functools import wraps

from django.contrib import messages
from django.shortcuts import redirect
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods

from sessions.forget.lifecycle import LifecycleConflict, recovery_deadline
from teams.access import Reading
from web.scope import Workspace, team_required


def is_htmx(request) -> bool:
    return request.headers.get("HX-Request") == "true"


def safe_next(request, fallback: str) -> str:
    target = request.POST.get("next") or request.GET.get("next") or ""
    if target and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return fallback


def session_with_role(request, public_id: str, role: str, reading: Reading = Reading.CONTENT):
    """The caller's session ``public_id`` (404 if they cannot read it at ``reading``) when
    they hold ``role`` in its team (403 if not)."""
    workspace = Workspace.of(request)
    session = workspace.session_or_404(public_id, reading=reading)
    workspace.require(role, session.team_id)
    return session


def wrong_state_redirect(request, session, *, in_trash: bool, then: str = ""):
    """When the session is not where this page needs it (``in_trash`` or alive): a redirect
    to where it is, with a message saying so (``then``: what to do instead); else None."""
    title = session.title or session.public_id
    if in_trash and session.deleted_at is None:
        messages.info(request, f"“{title}” is not in the trash{': ' + then if then else ''}.")
        return redirect("web:session", public_id=session.public_id)
    if not in_trash and session.deleted_at is not None:
        messages.info(
            request,
            f"“{title}” is already in the trash; it can be restored until "
            f"{recovery_deadline(session):%Y-%m-%d}.",
        )
        return redirect("web:trash")
    return None


def session_action(
    role: str, methods: tuple[str, ...] = ("GET", "POST"), reading: Reading = Reading.CONTENT
):
    """A page that acts on one session (delete, restore, purge). Signed in with a team,
    ``methods`` only; the view gets the session (of the caller's teams, read at
    ``reading``, else 404) in place of its id when the caller holds ``role`` in its team
    (else 403). Deleting, restoring and purging need only ``Reading.LISTED``: the team's
    admins do that to a private session they do not read (docs/visibility.md).

    A ``LifecycleConflict`` the view raises is the pages' one answer to it: the session
    changed state between the page and the click (someone else deleted, restored or
    purged it), so the message says what the state is, on the trash page."""

    def decorate(view):
        @team_required
        @require_http_methods(list(methods))
        @wraps(view)
        def wrapped(request, public_id):
            session = session_with_role(request, public_id, role, reading)
            try:
                return view(request, session)
            except LifecycleConflict as exc:
                messages.info(request, str(exc))
                return redirect("web:trash")

        return wrapped

    return decorate
