"""Schemathesis over the whole OpenAPI schema, in-process through Django's WSGI app, on the
real test database, as an agent holding a valid project API token.

Every check runs (no server error, documented status codes, content types, headers and
response bodies, negative data rejected, positive data accepted, ...), in schemathesis's
examples, coverage and fuzzing phases; the fuzzing phase is bounded (MAX_EXAMPLES per
operation) and seeded, so a run is the same every time and fits CI (about a minute).
Path ``{id}`` parameters are drawn partly from sessions and memories that exist (a session
alive with messages, one in the trash, a decision and a finding), so reads and writes reach
real data rather than answering 404 to every random id.

One check is narrowed, not dropped: some endpoints apply rules a JSON schema cannot state
(one field relative to another, the project a token belongs to, the content of an uploaded
file). There a schema-valid request may get a 400, but only one that names those rules'
fields (``RULES_BEYOND_THE_SCHEMA``); any other 400 still fails.
"""

from __future__ import annotations

import json

import hypothesis
import pytest
from hypothesis import strategies as st
from schemathesis.checks import positive_data_acceptance

from memories.api.serializers import MemoryPatchSerializer
from tests.api.conftest import ALIVE_ID, MEMORY_IDS, TRASHED_ID, load_schema

pytestmark = pytest.mark.django_db

MAX_EXAMPLES = 10

# The fields a 400 may name for a schema-valid request, by operation, and why.
# A date-time's UTC offset must lie within ±15:59 (PostgreSQL's range); RFC 3339, and so the
# schema's date-time format, allows up to ±23:59.
TIME_FILTERS = {"started_after", "started_before", "ended_after", "ended_before"}
FILTER_RULES = TIME_FILTERS | {
    "project",  # an API token may name only its own project
}
RULES_BEYOND_THE_SCHEMA = {
    "GET /api/v1/sessions": FILTER_RULES,
    "GET /api/v1/search": FILTER_RULES | {"q"},  # a query, or an entity to look for
    "POST /api/v1/search": FILTER_RULES | {"q"},
    "POST /api/v1/context": FILTER_RULES,
    "GET /api/v1/context": FILTER_RULES,
    "GET /api/v1/entities": FILTER_RULES,
    # No filter at all needs "all": true (an empty body never deletes everything).
    "POST /api/v1/sessions/delete": FILTER_RULES | {"all"},
    # ended_at not before started_at; either messages or a conversation, not both. A
    # visibility must be one the project allows, and 'private' needs a token acting for a
    # person (docs/visibility.md): the token and the project decide, not the schema.
    "POST /api/v1/sessions": {
        "project",
        "started_at",
        "ended_at",
        "conversation",
        "visibility",
        "detail",
    },
    # The uploaded file is read by its format's importer: detail, line and field say where.
    "POST /api/v1/import": {"project", "file", "detail", "line", "field", "visibility"},
    "POST /api/v1/events": {"project", "detail", "line", "field", "visibility"},
    # The sessions' project must allow the visibility; a team's session is never private.
    "POST /api/v1/sessions/visibility": {"visibility", "detail"},
    "PATCH /api/v1/sessions/{id}": {"visibility", "detail"},
    "POST /api/v1/anonymize": {"project"},
    "GET /api/v1/memories/export": {"project", "session"},
    # Memory files are read and checked entry by entry: file, entry and field say where.
    "POST /api/v1/memories/import": {
        "project",
        "session",
        "file",
        "entry",
        "detail",
        "line",
        "field",
    },
    # Memories: a session named must be one of the caller's; a readable id found in several
    # projects asks for the project; evidence must be messages of the session; a memory
    # scoped to a session needs one; resolving is for findings; a delete needs its reason.
    **{
        f"{method} /api/v1/memories{path}": {"project", "session"}
        for method, path in (
            ("GET", ""),
            ("GET", "/{id}"),
            ("PATCH", "/{id}"),
            ("DELETE", "/{id}"),
            ("POST", "/{id}/restore"),
            ("POST", "/{id}/resolve"),
            ("POST", "/{id}/links"),
            ("DELETE", "/{id}/links"),
            ("GET", "/{id}/related"),
            ("GET", "/topics"),
            ("GET", "/timeline"),
        )
    },
    "GET /api/v1/memories": {"project", "session", "after", "before"},
    "GET /api/v1/memories/topics": {"project", "session", "after", "before"},
    "GET /api/v1/memories/timeline": {"project", "session", "after", "before"},
    # ... and a visibility its project allows, never private for a token of no person.
    "POST /api/v1/memories": {
        *("project", "session", "evidence", "scope", "occurred_at", "visibility", "detail"),
    },
    "DELETE /api/v1/memories/{id}": {"project", "reason"},
    "GET /api/v1/memories/trash": {"project"},
    # until later than since; no filter needs "all"; a real delete needs its reason; more
    # than the cap is refused with the counts (detail beside the dry run's body).
    "POST /api/v1/memories/delete": {
        "project",
        "since",
        "until",
        "all",
        "reason",
        "non_field_errors",
        *("detail", "dry_run", "memories", "already_in_trash", "sample"),
        *("recovery_days", "limit", "records"),
    },
    # An edit takes the fields of the memory's own type only (DEC-001 has no severity).
    "PATCH /api/v1/memories/{id}": {"project", *MemoryPatchSerializer().fields},
    "POST /api/v1/memories/{id}/resolve": {"project", "type"},
    # Review: the project a person or token names; an edit's content (1..4000, not blank);
    # a revert's reason; reopening is for findings; a bulk review names each memory once.
    "POST /api/v1/memories/{id}/accept": {"project", "content"},
    "POST /api/v1/memories/{id}/reject": {"project"},
    "POST /api/v1/memories/{id}/unreject": {"project"},
    "POST /api/v1/memories/{id}/confirm": {"project"},
    "POST /api/v1/memories/{id}/revert": {"project", "reason"},
    "POST /api/v1/memories/{id}/reopen": {"project", "type"},
    "POST /api/v1/memories/review": {"project", "accept", "reject"},
    "POST /api/v1/memories/{id}/links": {"project", "target", "kind"},
    # Visibility: one the project allows; private only for a memory with an owner.
    "POST /api/v1/memories/{id}/visibility": {"project", "visibility", "detail"},
    "GET /api/v1/agent-states/{agent}": {"project", "session"},
    "PUT /api/v1/agent-states/{agent}": {"project", "session", "agent"},
    "GET /api/v1/people/{person}/recent": {"project"},
    # the days' range: before later than after
    "GET /api/v1/diary": {"project", "before"},
    "GET /api/v1/diary/export": {"project", "before"},
}

schema = load_schema()


@schema.hook
def flatmap_path_parameters(context, path_parameters):
    if not path_parameters or "id" not in path_parameters:
        return st.just(path_parameters)
    return st.sampled_from(
        [
            {**path_parameters, "id": ALIVE_ID},
            {**path_parameters, "id": TRASHED_ID},
            *({**path_parameters, "id": memory} for memory in MEMORY_IDS),
            path_parameters,
        ]
    )


def rejected_only_by_rules_beyond_the_schema(ctx, response, case):
    """positive_data_acceptance, where a 400 may name the fields of RULES_BEYOND_THE_SCHEMA."""
    if case.meta is None or not case.meta.generation.mode.is_positive:
        return None
    if response.status_code != 400:
        return None
    named = set(json.loads(response.content)) - {"code"}  # the error's code, not a field
    allowed = RULES_BEYOND_THE_SCHEMA[case.operation.label]
    assert named <= allowed, (
        f"Schema-valid request rejected for {', '.join(sorted(named - allowed))} "
        f"(a schema-valid request may be refused only for {', '.join(sorted(allowed))})"
    )
    return True


@schema.parametrize()
@hypothesis.settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    # The token fixture is made once per operation, on purpose: examples share its data.
    suppress_health_check=[
        hypothesis.HealthCheck.function_scoped_fixture,
        hypothesis.HealthCheck.too_slow,
    ],
)
def test_api_conforms_to_its_schema(case, auth):
    narrowed = case.operation.label in RULES_BEYOND_THE_SCHEMA
    case.call_and_validate(
        headers=auth,
        excluded_checks=[positive_data_acceptance] if narrowed else [],
        additional_checks=[rejected_only_by_rules_beyond_the_schema] if narrowed else [],
    )
