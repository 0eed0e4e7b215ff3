"""Anonymise one session: a preview of what changes (options as checkboxes), then apply
after a confirmation. Admins only."""

from __future__ import annotations

from django.contrib import messages
from django.db import transaction
from django.shortcuts import redirect, render

from sessions.forget.anonymize import anonymize_session, config_from, start_run
from sessions.tasks import poke_enrichment
from teams.models import Role
from web.forms import AnonymizeForm
from web.views.util import session_action


@session_action(Role.ADMIN)
def session_anonymize(request, session):
    if request.method == "POST":
        form = AnonymizeForm(request.POST)
    else:
        form = AnonymizeForm({name: True for name in AnonymizeForm.OPTIONS})
    form.is_valid()  # every field is optional: always valid
    config = config_from(form.options())
    applying = request.method == "POST" and request.POST.get("action") == "apply"
    if applying and not form.cleaned_data["confirm"]:
        form.add_error("confirm", "Tick this to apply: the original text is not kept.")
        applying = False
    run = start_run(session.project, config, dry_run=not applying)
    outcome = anonymize_session(session, run, by=request.user)
    if applying:
        if outcome.left_to_embed:
            transaction.on_commit(poke_enrichment)
        changed = sum(outcome.replacements.values())
        messages.success(
            request,
            f"Anonymised: {changed:,} replacement{'s' if changed != 1 else ''} in "
            f"{outcome.messages_changed:,} message(s). Search follows as the messages are "
            "indexed again.",
        )
        return redirect("web:session", public_id=session.public_id)
    return render(
        request,
        "web/session/anonymize.html",
        {
            "session": session,
            "form": form,
            "options": [form[name] for name in AnonymizeForm.OPTIONS],
            "preview": outcome.as_dict(),
        },
    )
