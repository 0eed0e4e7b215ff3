"""A session's own text through its project's redaction, on every path that writes it.

Title, persona, person, topics, artifacts and metadata are written at capture and import
(``service.py``), by the API's PATCH and in the admin; each calls ``redact_session_text``,
so they are redacted as the session's messages are (``redaction.redact_for``).
"""

from __future__ import annotations

from sessions.capture.redaction import redact_for
from sessions.models import Session

TEXT_FIELDS = ("title", "agent_persona", "user_name", "topics", "artifacts", "metadata")


def _max_length(name: str) -> int | None:
    field = Session._meta.get_field(name)
    return getattr(getattr(field, "base_field", field), "max_length", None)


def _fit(value, limit: int | None):
    """A mark (``[REDACTED:email]``) can be longer than what it replaced: cut to the column."""
    if limit is None:
        return value
    if isinstance(value, str):
        return value[:limit]
    if isinstance(value, list):
        return [item[:limit] if isinstance(item, str) else item for item in value]
    return value


def redact_session_text(project, fields: dict) -> int:
    """Redact, in place, the session text among ``fields`` (column name → value, as a
    model's ``save`` or a serializer's validated data holds it); returns how many values
    were replaced."""
    total = 0
    for name in TEXT_FIELDS:
        if fields.get(name):
            redacted, count = redact_for(project, fields[name])
            if count:
                fields[name] = _fit(redacted, _max_length(name))
                total += count
    return total
