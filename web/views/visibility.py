"""Who reads a session or a memory, changed from the UI (docs/visibility.md): the control on a
session's page and the bulk action of the list go through ``sessions.visibility.change``, the
control on a memory's page through ``memories.visibility.change``: the one path every change
takes (the API's too): the owner gives any visibility the project allows,
an admin of the team only a less visible one, all or nothing; a refusal is a message saying
why, and nothing changes."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from sessions import visibility
from teams.access import Reading
from teams.models import Visibility
from web.scope import Workspace, team_required
from web.views.util import safe_next

LABELS = dict(Visibility.choices)
# What a select offers, short enough for a side card or the list's bar.
CHOICES = [
    (Visibility.PRIVATE, "Private: only the owner"),
    (Visibility.SUMMARY, "Summary: the team reads the summary"),
    (Visibility.TEAM, "Team: everyone reads it"),
]
# The same, for a memory ('summary': the team reads it once accepted).
MEMORY_CHOICES = [
    (Visibility.PRIVATE, "Private: only the owner"),
    (Visibility.SUMMARY, "Summary: the team, once accepted"),
    (Visibility.TEAM, "Team: everyone reads it"),
]
# What a change made of one memory.
MEMORY_BECAME = {
    Visibility.PRIVATE: "Now private: only its owner reads it.",
    Visibility.SUMMARY: "Now summary: the team reads it once it is accepted.",
    Visibility.TEAM: "Now shared with the team.",
}
# What a bulk change made of the sessions, said after their number.
BECAME = {
    Visibility.PRIVATE: "private: only their owners read them",
    Visibility.SUMMARY: "summary only: the team reads their title, summary and topics",
    Visibility.TEAM: "shared with the whole team",
}
# At most this many ticked sessions change at once (a page of the list is 50).
MAX_SELECTED = 500


def choices_for(access, row, labels, noun: str = "session") -> list[tuple[str, str]]:
    """What the control on ``row``'s page offers (``sessions.visibility.giveable``, with
    ``labels``); empty when the caller may give it no other visibility."""
    allowed = visibility.giveable(access, row, noun)
    if not allowed or allowed == [row.visibility]:
        return []
    return [(v, label) for v, label in labels if v in allowed]


def _plural(n: int) -> str:
    return f"{n:,} session{'' if n == 1 else 's'}"


def changed_message(wanted: str, changed: int, already: int) -> str:
    """What a change did, in one sentence: how many became ``wanted``, how many were."""
    if not changed:
        subject = "It already was" if already == 1 else "They already were"
        return f"{subject} {wanted}: nothing changed."
    text = f"{_plural(changed)} {'is' if changed == 1 else 'are'} now {BECAME[wanted]}."
    if already:
        text += f" {already:,} already {'was' if already == 1 else 'were'}."
    return text


@team_required
@require_POST
def session_visibility(request, public_id):
    """The control on a session's page."""
    workspace = Workspace.of(request)
    session = workspace.session_or_404(public_id, reading=Reading.LISTED)
    wanted = request.POST.get("visibility", "")
    try:
        changed = visibility.change(workspace.access, [session], wanted)
    except visibility.VisibilityError as refusal:
        messages.error(request, f"Visibility not changed: {refusal}.")
    else:
        if changed:
            label = LABELS[wanted]
            messages.success(request, f"Now {label[0].lower()}{label[1:]}.")
        else:
            messages.info(request, changed_message(wanted, 0, 1))
    # An admin who made it private no longer reads it: the page shows what it still may.
    return redirect("web:session", public_id=public_id)


@team_required
@require_POST
def bulk_visibility(request):
    """The sessions ticked on the list get one visibility, all or nothing."""
    workspace = Workspace.of(request)
    back = safe_next(request, reverse("web:sessions"))
    ids = list(dict.fromkeys(i.strip() for i in request.POST.getlist("session") if i.strip()))
    wanted = request.POST.get("visibility", "")
    if not ids:
        messages.info(request, "Tick the sessions to change first.")
        return redirect(back)
    if len(ids) > MAX_SELECTED:
        messages.error(request, f"Change at most {MAX_SELECTED} sessions at a time.")
        return redirect(back)
    rows = workspace.sessions(Reading.LISTED).select_related("project").filter(public_id__in=ids)
    if len(rows) != len(ids):
        messages.error(
            request,
            f"Visibility not changed: {len(ids) - len(rows)} of the ticked sessions are no "
            "longer in your list (deleted, or no longer shared with you). Nothing changed.",
        )
        return redirect(back)
    try:
        changed = visibility.change(workspace.access, list(rows), wanted)
    except visibility.VisibilityError as refusal:
        messages.error(request, f"Visibility not changed, for any of them: {refusal}.")
        return redirect(back)
    level = messages.success if changed else messages.info
    level(request, changed_message(wanted, len(changed), len(ids) - len(changed)))
    return redirect(back)
