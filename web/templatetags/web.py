"""Filters of the UI's templates: safe Markdown, tool blocks, folding, small formats."""

from __future__ import annotations

import json
import math
from datetime import timedelta

from django import template
from django.template.defaultfilters import pluralize
from django.utils import timezone

from sessions.capture.quota import quota_state
from web import markdown, transcript

register = template.Library()


@register.filter
def render_markdown(text):
    return markdown.render_markdown(text)


@register.filter
def render_code(text):
    return markdown.render_code(text, transcript.code_language(text))


@register.filter
def is_long(text) -> bool:
    return transcript.is_long(text)


@register.filter
def preview(text) -> str:
    return transcript.preview(text)


@register.filter
def line_count(text) -> int:
    return (text or "").count("\n") + 1


@register.filter
def percent(value) -> int:
    return round((value or 0) * 100)


@register.filter
def quota(session):
    """The session against its project's quota (``.warning``, ``.percent``)."""
    return quota_state(session.project, session.size_bytes)


@register.filter
def thousands(value) -> str:
    """12345 → "12,345"."""
    try:
        return f"{int(value or 0):,}"
    except (TypeError, ValueError):
        return ""


@register.filter
def duration(session) -> str:
    """ "3 min", "1 h 20 min" from a session's start to its end, "" when unknown."""
    if not session.ended_at or not session.started_at:
        return ""
    seconds = int((session.ended_at - session.started_at).total_seconds())
    if seconds < 60:
        return f"{max(seconds, 0)} s"
    minutes = seconds // 60
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    return f"{hours // 24} days"


def time_left_text(deadline, now) -> str:
    """How long until ``deadline``, as a person counts it: calendar days to the deadline's
    date (deleted today with 30-day retention: "30 days left"), then hours once less than
    a day is left, so the last day never reads "0 days" or "1 day" when it is 2 hours."""
    remaining = deadline - now
    if remaining <= timedelta(0):
        return "to be purged within the hour"  # the hourly purge has not run yet
    if remaining < timedelta(days=1):
        if remaining < timedelta(hours=1):
            return "less than an hour left"
        hours = math.ceil(remaining / timedelta(hours=1))
        return f"{hours} hour{pluralize(hours)} left"
    tz = timezone.get_current_timezone()
    days = (timezone.localtime(deadline, tz).date() - timezone.localtime(now, tz).date()).days
    return f"{days} day{pluralize(days)} left"


@register.filter
def time_left(deadline) -> str:
    """A trash deadline as "30 days left", "5 hours left" (see ``time_left_text``)."""
    if deadline is None:
        return ""
    return time_left_text(deadline, timezone.now())


@register.filter
def get(mapping, key):
    try:
        return mapping.get(key, 0)
    except AttributeError:
        return None


@register.simple_tag(takes_context=True)
def nav_active(context, *names) -> str:
    match = getattr(context.get("request"), "resolver_match", None)
    return "is-active" if match and match.url_name in names else ""


@register.filter
def pretty_json(value):
    """A JSON value as highlighted, indented JSON."""
    text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    return markdown.render_code(text, "json")


@register.filter
def first_line(text) -> str:
    for line in (text or "").splitlines():
        if line.strip():
            return line.strip()[:160]
    return ""


REVIEW_COUNT_CAP = 100  # the menu says "99+" beyond: every page shows it


@register.simple_tag
def review_waiting(workspace) -> str:
    """How many memories of the workspace's project (or team) wait for review, as the menu
    and the dashboard say it ("" for none, "99+" for many)."""
    from memories.capture.review import pending_count
    from memories.retrieve.query import visible

    if workspace is None or workspace.team is None:
        return ""
    cached = getattr(workspace, "_review_waiting", None)
    if cached is None:
        count = pending_count(visible(workspace.project_access), at_most=REVIEW_COUNT_CAP)
        cached = (
            ""
            if not count
            else f"{REVIEW_COUNT_CAP - 1}+"
            if count >= REVIEW_COUNT_CAP
            else str(count)
        )
        workspace._review_waiting = cached
    return cached
