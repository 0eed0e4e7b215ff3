"""What a search may be narrowed by, and the SQL ``WHERE`` that says it.

One ``Scope`` (the caller's teams, or one project for an agent token) and one ``Filters``
(what the caller asked for) become one parameterised condition on the session (alias ``s``)
and the message (alias ``m``). Keyword and vector retrieval both use it, so they can never
disagree about what is in scope. Deleted sessions are never searched.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime


@dataclass(frozen=True)
class Scope:
    """Whose data: team ids always, and project ids when narrower (an agent's token)."""

    team_ids: tuple[int, ...]
    project_ids: tuple[int, ...] | None = None

    @classmethod
    def for_access(cls, access, project=None) -> Scope:
        if project is not None:
            return cls(team_ids=(project.team_id,), project_ids=(project.pk,))
        if access.token is not None:
            return cls(team_ids=(access.token.team_id,), project_ids=(access.token.project_id,))
        return cls(team_ids=tuple(access.team_ids()))


@dataclass(frozen=True)
class Filters:
    agent: str = ""
    workflow: str = ""
    role: str = ""
    status: str = ""
    lifecycle: str = ""
    source_format: str = ""
    topic: str = ""
    entity_type: str = ""
    entity: str = ""
    started_after: datetime | None = None
    started_before: datetime | None = None
    exclude_session_ids: tuple[int, ...] = field(default_factory=tuple)

    @property
    def narrows_messages(self) -> bool:
        return bool(self.role)


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


def team_condition(scope: Scope, alias: str) -> tuple[str, list]:
    """The scope's team condition on ``alias`` (a table with ``team_id``), with its params.
    One team is named as a literal: the planner matches a big team's partial indexes
    (search/speed/team_indexes.py) only to "team_id = <that team>", not to a parameter."""
    if len(scope.team_ids) == 1:
        return f"{alias}.team_id = {int(scope.team_ids[0])}", []
    return f"{alias}.team_id = ANY(%s)", [list(scope.team_ids)]


def session_where(scope: Scope, filters: Filters) -> Where:
    """Conditions on ``s`` (agent_sessions_session) only."""
    where = Where()
    if not scope.team_ids:
        where.add("FALSE")
        return where
    where.add("s.team_id = ANY(%s)", list(scope.team_ids))
    if scope.project_ids is not None:
        where.add("s.project_id = ANY(%s)", list(scope.project_ids))
    where.add("s.deleted_at IS NULL")
    if filters.agent:
        where.add("s.agent_name = %s", filters.agent.strip().lower())
    for column in ("workflow", "status", "lifecycle", "source_format"):
        value = getattr(filters, column)
        if value:
            where.add(f"s.{column} = %s", value)
    if filters.topic:
        where.add("s.topics @> ARRAY[%s]::varchar[]", filters.topic.strip())
    if filters.started_after:
        where.add("s.started_at >= %s", filters.started_after)
    if filters.started_before:
        where.add("s.started_at < %s", filters.started_before)
    if filters.exclude_session_ids:
        where.add("NOT (s.id = ANY(%s))", list(filters.exclude_session_ids))
    if filters.entity_type or filters.entity:
        entity = ["e.session_id = s.id"]
        params = []
        if filters.entity_type:
            entity.append("e.type = %s")
            params.append(filters.entity_type)
        if filters.entity:
            entity.append("e.normalized = %s")
            params.append(filters.entity.strip().lower())
        where.add(
            f"EXISTS (SELECT 1 FROM agent_sessions_entity e WHERE {' AND '.join(entity)})",
            *params,
        )
    return where


def message_where(scope: Scope, filters: Filters) -> Where:
    """Conditions on ``s`` and on ``m`` (agent_sessions_message)."""
    where = session_where(scope, filters)
    if filters.role:
        where.add("m.role = %s", filters.role)
    return where
