"""Small helpers the page modules share."""

from __future__ import annotations

from django.utils.http import url_has_allowed_host_and_scheme


def is_htmx(request) -> bool:
    return request.headers.get("HX-Request") == "true"


def safe_next(request, fallback: str) -> str:
    target = request.POST.get("next") or request.GET.get("next") or ""
    if target and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return fallback
