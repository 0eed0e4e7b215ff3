"""The SQL ``WHERE`` of a search: the caller's scope and filters, as ``Filters.apply`` says
them in the ORM (sessions/filters.py).

One ``Access`` (its team ids, its project ids when narrower, and the person it reads as) and
one ``Filters`` become one parameterised condition on the session (alias ``s``) and the
message (alias ``m``). Keyword and vector retrieval both use it, so they can never disagree
about what is in scope. Deleted sessions are never searched, and only the sessions the caller
reads (``Access.visibility_sql``, docs/visibility.md): messages at ``Reading.CONTENT``, so a
teammate's private session is not merely hidden from the results but never ranked, counted
or pooled (its words weigh nothing in a search that cannot show it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sessions.filters import Filters
from teams.access import Access, Reading

# Filters that compare a session column with the value asked for: (filter, SQL condition).
SESSION_COLUMNS = (
    ("agent", "s.agent_name = %s"),
    ("workflow", "s.workflow = %s"),
    ("person", "s.user_name = %s"),
    ("status", "s.status = %s"),
    ("lifecycle", "s.lifecycle = %s"),
    ("source_format", "s.source_format = %s"),
    ("topic", "s.topics @> ARRAY[%s]::varchar[]"),
    ("started_after", "s.started_at >= %s"),
    ("started_before", "s.started_at < %s"),
    ("ended_after", "s.ended_at >= %s"),
    ("ended_before", "s.ended_at < %s"),
    ("min_priority", "s.decay_priority >= %s"),
)


@dataclass
class Where:
    """``sql`` joined by AND, with its ``params`` (psycopg ``%s`` placeholders)."""

    clauses: list[str] = field(default_factory=list)
    params: list = field(default_factory=list)

    def add(self, clause: str, *params) -> None:
        self.clauses.append(clause)
        self.params.extend(params)

    @property
    def sql(self) -> str:
        return " AND ".join(self.clauses) or "TRUE"


def team_condition(access: Access, alias: str) -> tuple[str, list]:
    """The access's team condition on ``alias`` (a table with ``team_id``), with its params.
    One team is named as a literal: the planner matches a big team's partial indexes
    (search/speed/team_indexes.py) only to "team_id = <that team>", not to a parameter."""
    if len(access.team_ids) == 1:
        return f"{alias}.team_id = {int(access.team_ids[0])}", []
    return f"{alias}.team_id = ANY(%s)", [list(access.team_ids)]


def session_where(access: Access, filters: Filters, reading=Reading.CONTENT) -> Where:
    """Conditions on ``s`` (agent_sessions_session) only: the sessions ``access`` reads at
    ``reading`` (their messages unless said otherwise: a session-level list of titles and
    summaries may ask for ``Reading.SUMMARY``)."""
    where = Where()
    if not access.team_ids:
        where.add("FALSE")
        return where
    where.add("s.team_id = ANY(%s)", list(access.team_ids))
    if access.project_ids is not None:
        where.add("s.project_id = ANY(%s)", list(access.project_ids))
    where.add("s.deleted_at IS NULL")
    where.add(*_readable(access, reading))
    for name, condition in SESSION_COLUMNS:
        value = getattr(filters, name)
        if value:
            where.add(condition, value)
    if filters.exclude_session_ids:
        where.add("NOT (s.id = ANY(%s))", list(filters.exclude_session_ids))
    if filters.exclude_archived:
        where.add("s.lifecycle <> 'archived'")
    if filters.entity_type or filters.entity:
        entity = ["e.session_id = s.id"]
        params = []
        if filters.entity_type:
            entity.append("e.type = %s")
            params.append(filters.entity_type)
        if filters.entity:
            entity.append("e.normalized = %s")
            params.append(filters.entity)
        where.add(
            f"EXISTS (SELECT 1 FROM agent_sessions_entity e WHERE {' AND '.join(entity)})",
            *params,
        )
    return where


def _readable(access: Access, reading: Reading) -> tuple:
    """The visibility condition on ``s`` and its params, as ``Where.add`` takes them."""
    sql, params = access.visibility_sql("s", reading)
    return (sql, *params)


def message_where(access: Access, filters: Filters) -> Where:
    """Conditions on ``s`` and on ``m`` (agent_sessions_message): a message of the role."""
    where = session_where(access, filters)
    if filters.role:
        where.add("m.role = %s", filters.role)
    return where


def whole_session_where(access: Access, filters: Filters, reading=Reading.CONTENT) -> Where:
    """Conditions on ``s`` for a list of whole sessions: a session has a message of the role
    (what a session list means by it)."""
    where = session_where(access, filters, reading)
    if filters.role:
        where.add(
            "EXISTS (SELECT 1 FROM agent_sessions_message r"
            " WHERE r.session_id = s.id AND r.role = %s)",
            filters.role,
        )
    return where
