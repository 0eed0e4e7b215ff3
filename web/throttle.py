"""Sign-in throttling (django-axes, configured in settings): whose address a failed
sign-in counts against, and the page a locked-out person sees instead of the form."""

from __future__ import annotations

from axes.helpers import get_cool_off
from django.conf import settings
from django.shortcuts import render


def client_ip(request) -> str:
    """The address a sign-in comes from. Behind the TLS proxy (``BEHIND_TLS_PROXY``) that
    is the last ``X-Forwarded-For`` entry, the one the proxy appended: the entries before
    it come from the client and could be forged to spread failures over many addresses."""
    if settings.BEHIND_TLS_PROXY:
        forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "").rsplit(",", 1)[-1].strip()
        if forwarded:
            return forwarded
    return request.META.get("REMOTE_ADDR", "")


def locked_out(request, original_response=None, credentials=None):
    """429 with a page that says why and how long to wait (``Retry-After`` too). The wait
    is the whole cool-off: this answers the failure that was just recorded."""
    cool_off = get_cool_off(request)
    response = render(
        request,
        "registration/locked_out.html",
        {
            "minutes": round(cool_off.total_seconds() / 60),
            "failure_limit": settings.AXES_FAILURE_LIMIT,
        },
        status=429,
    )
    response["Retry-After"] = str(int(cool_off.total_seconds()))
    return response
