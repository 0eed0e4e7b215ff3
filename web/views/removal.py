"""Remove one message of a session (admins): a confirmation page with a reason, then the
message becomes a tombstone (``sessions.forget.messages``)."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from sessions.forget.lifecycle import LifecycleConflict
from sessions.forget.messages import remove_message, tombstone_text
from sessions.models import KEYWORD_VECTORS, Message
from teams.models import Role
from web.forms import RemoveMessageForm
from web.scope import team_required
from web.views.util import session_with_role, wrong_state_redirect


def _at(session, seq: int) -> str:
    return f"{reverse('web:session', args=[session.public_id])}?at={seq}#m-{seq}"


@team_required
@require_http_methods(["GET", "POST"])
def message_remove(request, public_id, seq):
    session = session_with_role(request, public_id, Role.ADMIN)
    if elsewhere := wrong_state_redirect(request, session, in_trash=False):
        return elsewhere
    message = get_object_or_404(
        Message.objects.of_session(session).defer(*KEYWORD_VECTORS),
        seq=seq,
    )
    if message.removed_at is not None:
        messages.info(request, f"Message #{seq} was already {tombstone_text(message)}.")
        return redirect(_at(session, seq))
    form = RemoveMessageForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        try:
            removal = remove_message(
                session, seq, by=request.user, reason=form.cleaned_data["reason"]
            )
        except LifecycleConflict as exc:  # someone else removed it, or trashed the session
            messages.info(request, str(exc))
            return redirect(_at(session, seq))
        messages.success(
            request,
            f"Removed message #{seq} ({removal.bytes:,} bytes): its text, vectors and what "
            "was derived from it are gone; the summary and entities are being rebuilt.",
        )
        return redirect(_at(session, seq))
    return render(
        request,
        "web/session/remove_message.html",
        {"session": session, "message": message, "form": form, "cancel": _at(session, seq)},
    )
