"""API tokens of the current team's projects, and team-level ones (every project of the
team, found by the agent's working directory), for its admins: create with the permissions
chosen (the raw token is shown once, on the answer to the POST, and never stored), list with
their permissions, revoke. A person gives a token only what their own role allows.

A token made here acts for its maker (its sessions are theirs, it reads their private ones),
or for nobody (a team token); it may carry its own default visibility (docs/visibility.md)."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from teams.models import ApiToken, Role
from web.forms import ACTS_FOR_ME, TokenForm
from web.scope import Workspace, team_required


def _tokens(workspace):
    return (
        workspace.team_access.scope(ApiToken.objects.all())
        .select_related("project", "created_by", "person")
        .order_by("revoked_at", "-created_at")
    )


@never_cache
@team_required
@require_http_methods(["GET", "POST"])
def tokens(request):
    workspace = Workspace.of(request)
    workspace.require(Role.ADMIN)
    # The projects are the current team's: what a person may grant is decided there.
    grantable = workspace.access.grantable(workspace.team.pk)
    person = request.user.get_username()
    form = TokenForm(
        request.POST if request.method == "POST" else None,
        projects=workspace.projects,
        grantable=grantable,
        person=person,
        initial={"project": workspace.project.pk if workspace.project else None},
    )
    created = None
    if request.method == "POST" and form.is_valid():
        chosen = form.cleaned_data["project"]
        project = next((p for p in workspace.projects if p.pk == chosen), None)
        token, raw = ApiToken.issue(
            project,
            team=workspace.team if project is None else None,
            name=form.cleaned_data["name"].strip(),
            created_by=request.user,
            # A token acts for its maker unless they make a team token (acting for nobody).
            person=request.user if form.cleaned_data["acts_for"] == ACTS_FOR_ME else None,
            default_visibility=form.cleaned_data["default_visibility"],
            permissions=form.cleaned_data["permissions"],
        )
        created = {"token": token, "raw": raw}
        form = TokenForm(
            projects=workspace.projects,
            grantable=grantable,
            person=person,
            initial={"project": chosen},
        )
    return render(
        request,
        "web/tokens.html",
        {"form": form, "tokens": list(_tokens(workspace)[:500]), "created": created},
    )


@team_required
@require_POST
def token_revoke(request, pk):
    workspace = Workspace.of(request)
    token = workspace.access.scope(ApiToken.objects.select_related("project")).filter(pk=pk).first()
    if token is None:
        raise Http404("No such token.")
    workspace.require(Role.ADMIN, token.team_id)
    label = token.name or token.prefix + "…"
    if token.revoke():
        messages.success(request, f"Revoked “{label}”: agents using it are refused from now on.")
    else:
        messages.info(request, f"“{label}” was already revoked.")
    return redirect("web:tokens")
